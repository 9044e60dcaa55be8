package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/webhooks"
)

// BenchmarkDeliveryThroughput measures how fast the worker delivers a
// backlog to one local receiver that answers 200 at once, on SQLite: b.N
// personal_best events are written while the receiver holds the first
// delivery (not timed), then it lets go and the time runs until every
// event is delivered (one endpoint's deliveries go one at a time, in
// order). Reported as events/s.
//
//	go test -run '^$' -bench DeliveryThroughput ./webhooks/
func BenchmarkDeliveryThroughput(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	hold := make(chan struct{})
	var received atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
		received.Add(1)
	}))
	defer rcv.Close()
	var delivered atomic.Int64
	done := make(chan struct{}, 1)
	var want atomic.Int64
	m := webhooks.New(webhooks.Config{AllowPrivate: true, Attempted: func(d podium.WebhookDelivery) {
		if d.Status == podium.WebhookDelivered && delivered.Add(1) == want.Load() {
			done <- struct{}{}
		}
	}})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := engine.New(engine.Config{Store: st, Logger: log, Modules: []engine.Module{feed.New(feed.Config{}), m}})
	ctx := context.Background()
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	url, prefix := rcv.URL, ""
	if _, err := m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix, Types: []string{webhooks.TypePersonalBest}}); err != nil {
		b.Fatal(err)
	}
	bd := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "ms", Order: podium.Asc}}, Mode: podium.Best}
	if err := bd.Normalize(); err != nil {
		b.Fatal(err)
	}
	if _, _, err := eng.PutBoard(ctx, bd); err != nil {
		b.Fatal(err)
	}
	// b.N personal bests: each player's first score, then a better one.
	const batch = 500
	for n := 0; n < 2*b.N; n += batch {
		var scores []engine.Score
		for i := n; i < min(n+batch, 2*b.N); i++ {
			scores = append(scores, engine.Score{Board: "b", Player: fmt.Sprintf("p%d", i/2), Keys: []int64{int64(1000 - i%2)}})
		}
		if _, err := eng.Submit(ctx, scores, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	pending, err := depth(st)
	if err != nil || pending < b.N {
		b.Fatalf("%d events pending, want at least %d (%v)", pending, b.N, err)
	}
	want.Store(int64(pending))
	b.ResetTimer()
	close(hold)
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d events delivered within 10 minutes", delivered.Load(), pending)
	}
	b.StopTimer()
	b.ReportMetric(float64(pending)/b.Elapsed().Seconds(), "events/s")
	if got := received.Load(); got < int64(pending) {
		b.Fatalf("the receiver got %d of %d events", got, pending)
	}
}
