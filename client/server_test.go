package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

const adminKey = "client-test-admin-key"

// testServer is a real podium (SQLite, engine, stream hub, contests, the
// HTTP API) on a fixed address, which restart stops and starts again on
// the same address and data, as a deploy would.
type testServer struct {
	t    testing.TB
	dir  string
	addr string
	URL  string
	// wrap, if set, wraps the API handler (to fail or cut requests).
	wrap func(http.Handler) http.Handler
	// now, if set, is the clock of the engine and the stream hub.
	now func() time.Time

	st  *sqlite.Store
	eng *engine.Engine
	hub *stream.Hub
	svc *ctf.Service
	hs  *http.Server
}

func newTestServer(t testing.TB, wrap func(http.Handler) http.Handler) *testServer {
	t.Helper()
	return newClockServer(t, wrap, nil)
}

// newClockServer is newTestServer on the clock now.
func newClockServer(t testing.TB, wrap func(http.Handler) http.Handler, now func() time.Time) *testServer {
	t.Helper()
	s := &testServer{t: t, dir: t.TempDir(), addr: "127.0.0.1:0", wrap: wrap, now: now}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *testServer) start() {
	t := s.t
	t.Helper()
	st, err := sqlite.Open(filepath.Join(s.dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Logger: log, Now: s.now})
	eng.Keys().SetAdminSecret(adminKey)
	// A short coalescing window keeps the stream tests quick.
	hub := stream.New(podiumhttp.StreamSource(eng), stream.Config{Logger: log, Coalesce: 20 * time.Millisecond, Now: s.now})
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc := contestService(eng) // the engine's contests module runs it
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub})
	var h http.Handler = srv.Handler()
	if s.wrap != nil {
		h = s.wrap(h)
	}
	var ln net.Listener
	for i := 0; ; i++ { // the old listener's port may take a moment to be free
		if ln, err = net.Listen("tcp", s.addr); err == nil || i == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.URL = "http://" + s.addr
	s.st, s.eng, s.hub, s.svc = st, eng, hub, svc
	s.hs = &http.Server{Handler: h}
	go s.hs.Serve(ln)
}

// stop closes the server and every connection to it.
func (s *testServer) stop() {
	if s.hs == nil {
		return
	}
	s.hub.Close()
	if err := s.hs.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.t.Log(err)
	}
	s.eng.Close() // stops the contests too
	s.st.Close()
	s.hs = nil
}

func (s *testServer) restart() {
	s.stop()
	s.start()
}
