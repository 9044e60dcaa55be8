package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkSubmitQuota measures what a quota costs the write path on
// SQLite: 64 writers send single submissions to a daily board without a
// quota, with one whose players come back (each player's count is read
// from the log once), and with one where every submission is a new
// player's (a read of the log index per submission, on the writer).
func BenchmarkSubmitQuota(b *testing.B) {
	for _, mode := range []string{"none", "quota-returning", "quota-new-players"} {
		b.Run(mode, func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			eng := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err := eng.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			bd := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "ms", Order: podium.Asc}}, Reset: podium.Reset{Every: podium.Daily}}
			if mode != "none" {
				bd.Quota = &podium.Quota{Max: podium.MaxQuota}
			}
			if err := bd.Normalize(); err != nil {
				b.Fatal(err)
			}
			if _, _, err := eng.PutBoard(context.Background(), bd); err != nil {
				b.Fatal(err)
			}
			const writers = 64
			var n atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := n.Add(1)
						if i > int64(b.N) {
							return
						}
						player := fmt.Sprintf("p%d", w)
						if mode == "quota-new-players" {
							player = fmt.Sprintf("p%d", i)
						}
						if _, err := eng.Submit(context.Background(), []engine.Score{{Board: "b", Player: player, Keys: []int64{i}}}, true, nil); err != nil {
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
