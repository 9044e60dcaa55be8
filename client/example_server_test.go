package client_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// startPodium runs a podium in this process for an example (as the
// client tests do: SQLite in a temporary directory, the engine, the stream
// hub, contests and the HTTP API on a local port), with the admin key
// adminKey. It returns the server's URL and a function that stops it and
// removes its data. A program of yours uses its server's URL instead.
func startPodium() (url string, stop func()) {
	dir, err := os.MkdirTemp("", "podium-example-")
	if err != nil {
		panic(err)
	}
	st, err := sqlite.Open(filepath.Join(dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		panic(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Logger: log})
	eng.Keys().SetAdminSecret(adminKey)
	hub := stream.New(podiumhttp.StreamSource(eng), stream.Config{Logger: log, Coalesce: 20 * time.Millisecond})
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		panic(err)
	}
	// The contests are the engine's contests module's (modules.All).
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() {
		hub.Close()
		hs.Close()
		eng.Close() // stops the contests too
		st.Close()
		os.RemoveAll(dir)
	}
}
