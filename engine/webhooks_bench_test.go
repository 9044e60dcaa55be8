package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/webhooks"
)

// BenchmarkSubmitWebhooks measures what the webhooks outbox costs the
// write path: BenchmarkSubmitFeed's load (64 writers, batches of 16
// improving times to a best board: about one personal best per score) on
// SQLite, with no endpoint ("none": the module drops the events before
// building them), with an endpoint subscribed to personal_best whose
// receiver holds the first delivery until the end ("outbox": the outbox
// rows in each commit, and no delivery work), and with a receiver that
// answers 200 at once ("delivering": the outbox and its delivery running
// beside the writers on the same database). ns/op is per score.
//
//	go test -run '^$' -bench SubmitWebhooks ./engine/
func BenchmarkSubmitWebhooks(b *testing.B) {
	for _, mode := range []string{"none", "outbox", "delivering"} {
		b.Run(mode, func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			hold := make(chan struct{})
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if mode == "outbox" {
					select {
					case <-hold:
					case <-r.Context().Done():
					}
				}
			}))
			defer rcv.Close()
			defer close(hold) // before rcv.Close, which waits for the held request
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			mods := modules.With(modules.Config{Store: st, Logger: log,
				Webhooks: webhooks.Config{AllowPrivate: true}})
			eng := engine.New(engine.Config{Store: st, Logger: log, Modules: mods})
			if err := eng.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			wh := mods[len(mods)-1].(*webhooks.Module)
			var ep podium.WebhookEndpoint
			if mode != "none" {
				url, prefix := rcv.URL, ""
				if ep, err = wh.CreateEndpoint(context.Background(), webhooks.EndpointSpec{URL: &url, Prefix: &prefix,
					Types: []string{webhooks.TypePersonalBest}}); err != nil {
					b.Fatal(err)
				}
			}
			bd := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "ms", Order: podium.Asc}}, Mode: podium.Best}
			if err := bd.Normalize(); err != nil {
				b.Fatal(err)
			}
			if _, _, err := eng.PutBoard(context.Background(), bd); err != nil {
				b.Fatal(err)
			}
			const writers, batch = 64, 16
			var next sync.Mutex
			n := 0
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						next.Lock()
						if n >= b.N {
							next.Unlock()
							return
						}
						n += batch
						next.Unlock()
						scores := make([]engine.Score, batch)
						for j := range scores {
							scores[j] = engine.Score{Board: "b", Player: fmt.Sprintf("p%d-%d", w, j), Keys: []int64{int64(1_000_000 - i*10 - w)}}
						}
						if _, err := eng.Submit(context.Background(), scores, false, nil); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if mode != "none" {
				// The load made events: the benchmark measures the outbox.
				if ds, err := wh.Deliveries(context.Background(), podium.WebhookDeliveryQuery{Endpoint: ep.ID, Limit: 1}); err != nil || len(ds) == 0 {
					b.Fatalf("no event in the outbox (%v)", err)
				}
			}
		})
	}
}
