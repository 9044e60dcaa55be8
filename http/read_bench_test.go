package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkHotRoutes measures the server's own cost of the hot routes, in
// process (the handler, the engine and the JSON, no socket): a player's
// rank, the top 100 and a single submit, on a board of 100,000 players.
// It tells a change in the handlers apart from the noise of a network
// benchmark; compare two revisions in one run:
//
//	go test ./http/ -run '^$' -bench HotRoutes -benchtime 20000x -count 6
func BenchmarkHotRoutes(b *testing.B) {
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
	h := srv.Handler()
	do := func(method, url, body string) int {
		req := httptest.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	if c := do("PUT", "/v1/boards/bench", `{"keys":[{"name":"n","order":"desc"}],"public":true}`); c != 201 {
		b.Fatalf("create board: %d", c)
	}
	const players = 100_000
	for i := 0; i < players; i += 1000 {
		var sb strings.Builder
		sb.WriteString(`{"scores":[`)
		for j := i; j < i+1000; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"board":"bench","player":"p%d","keys":[%d]}`, j, j*7%players)
		}
		sb.WriteString(`]}`)
		if c := do("POST", "/v1/scores", sb.String()); c != 200 {
			b.Fatalf("load: %d", c)
		}
	}
	for _, r := range []struct{ name, method, url, body string }{
		{"rank", "GET", "/v1/boards/bench/entries/p4242", ""},
		{"top100", "GET", "/v1/boards/bench/entries?limit=100", ""},
		{"submit", "POST", "/v1/boards/bench/scores", `{"player":"p77","keys":[123456]}`},
	} {
		b.Run(r.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if c := do(r.method, r.url, r.body); c != 200 && c != 201 {
					b.Fatalf("%s: %d", r.name, c)
				}
			}
		})
	}
}
