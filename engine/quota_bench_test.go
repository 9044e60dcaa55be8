package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkSubmitQuota measures what a quota costs the write path: 64
// writers send single submissions to a daily board, without and with a
// quota, from 64 returning players (each one's count is read from the log
// once) and from a new player each time (every group reads its players'
// counts from the log index, on the writer), on SQLite and, when
// PODIUM_TEST_POSTGRES is set, on PostgreSQL in shared mode.
func BenchmarkSubmitQuota(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		for _, mode := range []string{"returning", "returning-quota", "new-players", "new-players-quota"} {
			b.Run(db+"/"+mode, func(b *testing.B) { benchQuota(b, db, mode) })
		}
	}
}

func benchQuota(b *testing.B, db, mode string) {
	var st podium.Store
	cfg := engine.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if db == "sqlite" {
		s, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		st = s
	} else {
		dsn, _ := pgtest.Schema(b)
		s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		st, cfg.Node = s, "bench"
	}
	cfg.Store = st
	eng := modules.Engine(cfg)
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	bd := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "ms", Order: podium.Asc}}, Reset: podium.Reset{Every: podium.Daily}}
	if strings.HasSuffix(mode, "-quota") {
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
				if strings.HasPrefix(mode, "new-players") {
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
}
