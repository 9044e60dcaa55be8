package http_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkConnGuard measures a small read (GET of a board) over real
// keep-alive TCP connections, served plainly and on the server's Listener
// (the framing guard, conn.go), in one run.
//
//	go test ./http/ -run '^$' -bench ConnGuard -benchtime 2s -count 5
func BenchmarkConnGuard(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Logger: log})
	eng.Keys().SetAdminSecret(adminKey)
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log})
	b.Cleanup(func() { srv.Hub().Close(); eng.Close(); st.Close() })
	req := httptest.NewRequest("PUT", "/v1/boards/bench", strings.NewReader(`{"keys":[{"name":"n","order":"desc"}],"public":true}`))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, req)
	if w.Code != 201 {
		b.Fatalf("create board: %d %s", w.Code, w.Body)
	}
	for _, guarded := range []bool{false, true} {
		name := "plain"
		if guarded {
			name = "guarded"
		}
		b.Run(name, func(b *testing.B) {
			var ts *httptest.Server
			if guarded {
				ts = serveTest(srv)
			} else {
				ts = httptest.NewServer(srv.Handler())
			}
			defer ts.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := client.Get(ts.URL + "/v1/boards/bench")
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			})
		})
	}
}
