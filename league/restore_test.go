package league_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/review"
	"github.com/podiumhq/podium/sqlite"
)

// TestLeagueRestoreReadsOwnWrite: a node that loaded a period's tiers
// before a restore (a score held for review reads them and places no
// one) places that score's player, once approved, in the restored tier.
func TestLeagueRestoreReadsOwnWrite(t *testing.T) {
	ctx := context.Background()
	le := newLenv(t, nil)
	b := leagueBoard("lg", 5, "")
	b.Review = &podium.Review{Hold: podium.HoldAll}
	put(t, le.eng, b)
	res, err := le.eng.Submit(ctx, []engine.Score{{Board: "lg", Player: "pat", Keys: []int64{10}}}, true, nil)
	if err != nil || res[0].Held == nil {
		t.Fatalf("pat's score: %+v, %v; want it held", res, err)
	}
	req := &league.RestoreRequest{Tiers: []league.RestoreTier{{Player: "pat", Tier: "gold"}}}
	if n, err := le.mod().Restore(ctx, "lg", req); err != nil || n.Tiers != 1 {
		t.Fatalf("restore: %+v, %v", n, err)
	}
	var rv *review.Module
	for _, m := range le.eng.Modules() {
		if x, ok := m.(*review.Module); ok {
			rv = x
		}
	}
	if _, _, err := rv.Approve(ctx, res[0].Held.ID, "mod", ""); err != nil {
		t.Fatal(err)
	}
	if s := standing(t, le.mod(), "lg", "pat"); !s.Placed || s.TierName != "gold" {
		t.Fatalf("pat after the approval: %+v; want placed in gold", s)
	}
}

// failRestores fails the commit of a restore's rows (a league part with
// no fence).
type failRestores struct {
	*sqlite.Store
	on    atomic.Bool
	parts sync.Map
}

func (f *failRestores) LeaguePart(b *podium.LeagueBatch) podium.Part {
	p := f.Store.LeaguePart(b)
	if b.Fence == nil && len(b.Tiers)+len(b.Results) > 0 {
		f.parts.Store(p, true)
	}
	return p
}

func (f *failRestores) CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error) {
	for _, p := range b.Parts {
		if _, ok := f.parts.Load(p); ok && f.on.Load() {
			return 0, errors.New("the disk is gone (injected)")
		}
	}
	return f.Store.CommitDeferred(ctx, b)
}

func (f *failRestores) Commit(ctx context.Context, b *podium.Batch) error {
	t, err := f.CommitDeferred(ctx, b)
	if err != nil {
		return err
	}
	return f.Store.Sync(ctx, t)
}

// TestLeagueRestoreCommitFails: a restore whose commit fails is a 503
// that stored none of its rows (tiers, period, results: one
// transaction); after a restart the same restore stores them all.
func TestLeagueRestoreCommitFails(t *testing.T) {
	ctx := context.Background()
	var fs *failRestores
	le := newLenv(t, func(s *sqlite.Store) podium.Store { fs = &failRestores{Store: s}; return fs })
	put(t, le.eng, leagueBoard("lg", 5, ""))
	zero, one := 0, 1
	req := &league.RestoreRequest{
		Tiers: []league.RestoreTier{{Player: "pat", Tier: "silver"}},
		Periods: []league.RestorePeriod{{Period: "2026-11-30", Start: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
			SettledAt: time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC), Players: 1, Promoted: 1,
			Results: []league.RestoreResult{{Player: "pat", Tier: "bronze", Cohort: &zero, Rank: &one, Outcome: podium.OutcomePromoted, NewTier: "silver"}}}},
	}
	fs.on.Store(true)
	_, err := le.mod().Restore(ctx, "lg", req)
	if code := podium.ErrorCode(err); code != podium.ECodeUnavailable && code != podium.ECodeOutcomeUnknown {
		t.Fatalf("restore with a failing commit: %v; want unavailable", err)
	}
	fs.on.Store(false)
	le.restart()
	ls := le.store.(podium.LeagueStore)
	if ts, err := ls.LeagueTiers(ctx, "lg"); err != nil || len(ts) != 0 {
		t.Fatalf("tiers after the failed restore: %+v, %v", ts, err)
	}
	if ps, err := ls.LeaguePeriods(ctx, "lg"); err != nil || len(ps) != 0 {
		t.Fatalf("periods after the failed restore: %+v, %v", ps, err)
	}
	if n, err := le.mod().Restore(ctx, "lg", req); err != nil || n != (league.Restored{Tiers: 1, Periods: 1, Results: 1}) {
		t.Fatalf("restore after a restart: %+v, %v", n, err)
	}
	h, err := le.mod().History(ctx, "lg", "pat")
	if err != nil || len(h) != 1 || h[0].Outcome != podium.OutcomePromoted || h[0].NewName != "silver" || !h[0].Settled {
		t.Fatalf("pat's history: %+v, %v", h, err)
	}
	if s := standing(t, le.mod(), "lg", "pat"); s.Placed || s.TierName != "silver" {
		t.Fatalf("pat: %+v; want silver, not placed", s)
	}
}
