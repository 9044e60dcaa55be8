// Command trivial is the reference for bench/wrk: a Go net/http server
// whose one handler writes a short constant body. podium's figures are
// quoted as a ratio to it, measured in the same run on the same machine.
package main

import (
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18181", "listen address")
	flag.Parse()
	body := []byte(`{"status":"ok"}` + "\n")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
