package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// plainStore hides the store's feed: the engine then derives no events.
type plainStore struct{ podium.Store }

// BenchmarkSubmitFeed measures what deriving and storing feed events costs
// the write path: 64 writers submit batches of 16 improving times to a
// best board (about one personal best per score, and a new #1 now and
// then), with and without the feed.
func BenchmarkSubmitFeed(b *testing.B) {
	for _, feed := range []bool{false, true} {
		b.Run(fmt.Sprintf("feed=%v", feed), func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var store podium.Store = st
			if !feed {
				store = plainStore{st}
			}
			eng := modules.Engine(engine.Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err := eng.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
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
		})
	}
}

// BenchmarkFeedRead reads the 50 newest events of 100 boards holding 200
// events each, on SQLite: the all-boards GET /v1/feed.
func BenchmarkFeedRead(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var boards []string
	for i := range 100 {
		id := fmt.Sprintf("b%03d", i)
		boards = append(boards, id)
		var evs []podium.FeedEvent
		for s := range 200 {
			evs = append(evs, podium.FeedEvent{Board: id, Seq: uint64(s + 1), Kind: podium.FeedPersonalBest,
				At: podium.FromMillis(int64(1_700_000_000_000 + s*1000 + i)), Period: "all", Player: "p", Keys: []int64{int64(s)}})
		}
		batch := podium.Batch{Parts: []podium.Part{st.FeedPart(evs)}}
		if err := st.Commit(context.Background(), &batch); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		boards []string
	}{{"one", boards[:1]}, {"all", boards}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				evs, err := st.Feed(context.Background(), podium.FeedQuery{Boards: c.boards, Limit: 50})
				if err != nil || len(evs) != 50 {
					b.Fatal(len(evs), err)
				}
			}
		})
	}
}
