// Command trivial is the reference for bench/wrk: a Go net/http server
// whose one handler writes a short constant body. podium's figures are
// quoted as a ratio to it, measured in the same run on the same machine.
//
// With --body-bytes N it writes a constant JSON body of N bytes instead
// (bench/vsredis's trivial-page phase, the size of a top-100 page): what
// the transport alone costs for a body that large, so that the gap of the
// top 100 to the short body can be told apart from podium's own work.
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18181", "listen address")
	size := flag.Int("body-bytes", 0, "write a constant JSON body of this many bytes (0: the short {\"status\":\"ok\"})")
	flag.Parse()
	body := []byte(`{"status":"ok"}` + "\n")
	if *size > 0 {
		body = pageBody(*size)
	}
	// The length is declared as podium declares it: a body past net/http's
	// 2 KiB response buffer would otherwise go out chunked, in more writes.
	length := strconv.Itoa(len(body))
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}

// pageBody is a JSON object of exactly n bytes (at least 12): a string of
// filler, in one Write like a cached page.
func pageBody(n int) []byte {
	const head, tail = `{"pad":"`, `"}`
	fill := max(n-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("x", fill) + tail)
}
