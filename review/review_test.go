package review_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/review"
	"github.com/podiumhq/podium/sqlite"
)

// startEngine starts an engine over a fresh SQLite store with mods and a
// board "b" (one key, best) whose review holds every submission.
func startEngine(t *testing.T, mods ...engine.Module) *engine.Engine {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Modules: mods})
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); st.Close() })
	b := &podium.Board{ID: "b", Mode: podium.Best, Public: true, Keys: []podium.KeyDef{{Name: "k", Order: podium.Desc}},
		Review: &podium.Review{Hold: podium.HoldAll}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestModuleHoldsAndApproves: with the module, a board's review setting
// holds a score and an approval applies it with a seq; without it, the
// core holds nothing (the module is the only Holder).
func TestModuleHoldsAndApproves(t *testing.T) {
	ctx := context.Background()
	rv := review.New()
	eng := startEngine(t, rv)
	res, err := eng.Submit(ctx, []engine.Score{{Board: "b", Player: "alice", Keys: []int64{7}}}, true, nil)
	if err != nil || res[0].Held == nil || res[0].Seq != 0 {
		t.Fatalf("submit = %+v, %v; want held", res, err)
	}
	it, ar, err := rv.Approve(ctx, res[0].Held.ID, "admin", "")
	if err != nil || it.Status != podium.ReviewApproved || ar.Seq == 0 || it.Seq != ar.Seq {
		t.Fatalf("approve = %+v, %+v, %v; want approved with its seq", it, ar, err)
	}
	if _, err := rv.Reject(ctx, it.ID, "admin", "late"); err == nil {
		t.Fatal("a second decision succeeded")
	}

	bare := startEngine(t)
	res, err = bare.Submit(ctx, []engine.Score{{Board: "b", Player: "alice", Keys: []int64{7}}}, true, nil)
	if err != nil || res[0].Held != nil || res[0].Seq == 0 {
		t.Fatalf("submit without the module = %+v, %v; want applied", res, err)
	}
}
