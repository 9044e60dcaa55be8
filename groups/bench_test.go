package groups_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/groups"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkGroupWrite measures what group boards cost a write to their
// source: groups of 1000 scores to one board (every score a new best of
// its player, so that every one moves its group: the worst case) on
// SQLite, with no group board, with one (the sum of the best 5) and with
// three (sum and avg of the best 5, best member) over 2,000 groups of 5 of
// its 10,000 players, in the same run.
//
//	go test -run '^$' -bench GroupWrite ./groups/
func BenchmarkGroupWrite(b *testing.B) {
	ctx := context.Background()
	for _, nb := range []int{0, 1, 3} {
		withGroups := nb > 0
		name := []string{"NoGroupBoard", "OneGroupBoard", "", "ThreeGroupBoards"}[nb]
		b.Run(name, func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			eng := modules.Engine(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err := eng.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			k := []podium.KeyDef{{Name: "points", Order: podium.Desc}}
			put := func(bd *podium.Board) {
				if _, _, err := eng.PutBoard(ctx, bd); err != nil {
					b.Fatal(err)
				}
			}
			put(&podium.Board{ID: "pts", Keys: k})
			const group, players = 1000, 10_000
			if withGroups {
				put(&podium.Board{ID: "clans", Keys: k, GroupSet: &podium.GroupSet{MaxMembers: 5}})
				for _, r := range []string{podium.GroupSum, podium.GroupAvg, podium.GroupBest}[:nb] {
					put(&podium.Board{ID: "clan-" + r, Keys: k, GroupBoard: &podium.GroupBoard{Set: "clans", Source: "pts", Rule: r, K: 5}})
				}
				m := groupsOf(eng)
				for p := range players {
					if _, err := m.Join(ctx, "clans", fmt.Sprintf("g%d", p/5), fmt.Sprintf("p%d", p)); err != nil {
						b.Fatal(err)
					}
				}
			}
			scores := make([]engine.Score, group)
			v := int64(0)
			b.ResetTimer()
			for range b.N {
				for i := range scores {
					v++
					scores[i] = engine.Score{Board: "pts", Player: fmt.Sprintf("p%d", v%players), Keys: []int64{v}}
				}
				if _, err := eng.Submit(ctx, scores, false, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*group)/b.Elapsed().Seconds(), "scores/s")
		})
	}
}

// groupsOf is the engine's groups module.
func groupsOf(eng *engine.Engine) *groups.Module {
	for _, m := range eng.Modules() {
		if g, ok := m.(*groups.Module); ok {
			return g
		}
	}
	return nil
}
