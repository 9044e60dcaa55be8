package tournament

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// TestSettleFenced: a settler whose lease passed to another holder (it
// paused past the expiry) cannot commit what it computed under it: the
// settling transaction checks the lease's epoch, and nothing is credited.
func TestSettleFenced(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := New(Config{SettleEvery: -1})
	e := engine.New(engine.Config{Store: st, Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{m}})
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, b := range []*podium.Board{
		{ID: "cup", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}}, Tournament: &podium.Tournament{Start: now.Add(-time.Hour), End: now.Add(time.Hour), Ladder: "pts"}},
		{ID: "pts:total", Keys: []podium.KeyDef{{Name: "p", Order: podium.Desc}}, Mode: podium.Sum, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsTotal}},
	} {
		if err := b.Normalize(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Submit(ctx, []engine.Score{{Board: "cup", Player: "a", Keys: []int64{5}}}, true, nil); err != nil {
		t.Fatal(err)
	}
	stale, ok, err := st.AcquireLease(ctx, leaseName, "local", now, leaseTTL)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok, err := st.AcquireLease(ctx, leaseName, "other", now.Add(leaseTTL), leaseTTL); err != nil || !ok {
		t.Fatal("takeover failed", ok, err)
	}
	if _, err := m.settleUnder(ctx, "cup", stale); err == nil {
		t.Fatal("a settlement under a lost lease committed")
	}
	if ps, _ := st.Payouts(ctx, "cup"); len(ps) != 0 {
		t.Fatalf("payouts stored under a lost lease: %+v", ps)
	}
	p, _ := e.Top(ctx, engine.Query{Board: "pts:total"}, 0, 10)
	if len(p.Entries) != 0 {
		t.Fatalf("credits applied under a lost lease: %+v", p.Entries)
	}
	// The engine goes on: a settlement under a lease it holds works.
	fresh, ok, err := st.AcquireLease(ctx, leaseName, "local", now.Add(3*leaseTTL), leaseTTL)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if r, err := m.settleUnder(ctx, "cup", fresh); err != nil || r.Paid != 1000 {
		t.Fatalf("settle under a fresh lease = %+v, %v", r, err)
	}
}
