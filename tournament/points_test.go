package tournament_test

// Points ladders fed by settled tournaments: the decaying current board,
// its rebase, best-by-score credits, and the dates credits and their feed
// events carry. The tournament environment (tenv, cup, ladder, play) is in
// tournament_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/scoring"
	"github.com/podiumhq/podium/tournament"
)

// TestCurrentDecays: two tournaments half a life apart; the current board
// holds the recurrence current = current*2^(-(t-last)/H) + points,
// ranks by it, and moves to a new era (rebase) when a settlement falls in
// one, keeping the order.
func TestCurrentDecays(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	te.put(&podium.Board{ID: "pts:current", Keys: []podium.KeyDef{{Name: "era", Order: podium.Desc}, {Name: "points", Order: podium.Desc}},
		Mode: podium.Sum, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsCurrent, HalfLifeDays: 2}})
	h := int64(2 * 24 * 3600 * 1000)
	end1 := tStart.Add(5 * time.Hour)
	play(t, te, "t1", end1, 1000, map[string]int64{"a": 1, "b": 2})
	te.clock.Set(end1)
	if _, err := tourneyOf(te.eng).SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	// Two days later (one half-life, the next era): b wins 1000, a 500.
	end2 := end1.Add(48 * time.Hour)
	play(t, te, "t2", end2, 1000, map[string]int64{"b": 1, "a": 2})
	te.clock.Set(end2)
	rs, err := tourneyOf(te.eng).SettleDue(ctx)
	if err != nil || len(rs) != 1 || rs[0].Rebased != 2 {
		t.Fatalf("SettleDue = %+v, %v; want one run that rebased 2 entries", rs, err)
	}
	cur := values(t, te.eng, "pts:current")
	e1, e2 := scoring.Era(end1.UnixMilli(), h), scoring.Era(end2.UnixMilli(), h)
	if e2 != e1+1 {
		t.Fatalf("eras %d %d", e1, e2)
	}
	ka := scoring.Rebase(scoring.Scaled(1000, end1.UnixMilli(), e1, h), 1) + scoring.Scaled(500, end2.UnixMilli(), e2, h)
	kb := scoring.Rebase(scoring.Scaled(500, end1.UnixMilli(), e1, h), 1) + scoring.Scaled(1000, end2.UnixMilli(), e2, h)
	if cur["a"][0] != e2 || cur["a"][1] != ka || cur["b"][0] != e2 || cur["b"][1] != kb {
		t.Fatalf("current %v, want a [%d %d] b [%d %d]", cur, e2, ka, e2, kb)
	}
	// a: 1000 halved + 500 = 1000; b: 500 halved + 1000 = 1250.
	va, vb := scoring.Value(e2, ka, end2.UnixMilli(), h), scoring.Value(e2, kb, end2.UnixMilli(), h)
	if va < 999.99 || va > 1000.01 || vb < 1249.99 || vb > 1250.01 {
		t.Fatalf("values a %.4f b %.4f, want 1000 and 1250", va, vb)
	}
	p, _ := te.eng.Top(ctx, engine.Query{Board: "pts:current"}, 0, 10)
	if p.Entries[0].Player != "b" {
		t.Fatalf("current ranking %+v, want b first", p.Entries)
	}
	if p.Entries[0].Value < 1249.99 || p.Entries[0].Value > 1250.01 || !p.Entries[0].Decayed {
		t.Fatalf("b's value on read: %+v", p.Entries[0])
	}
	// check recomputes the decayed points from the payouts, rebase included.
	te.clock.Set(end2.Add(100 * 24 * time.Hour))
	if d, err := tournament.CheckSettlements(ctx, te.store, te.clock.Now()); err != nil || len(d) != 0 {
		t.Fatalf("CheckSettlements = %v, %v", d, err)
	}
}

// TestRebaseKeepsTieOrder: moving a decaying board 27 half-lives on turns
// 3, 2 and 1 points into equal fixed-point values; the players keep their
// order (the rebase is written in rank order), behind a fresh credit.
func TestRebaseKeepsTieOrder(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	te.put(&podium.Board{ID: "pts:current", Keys: []podium.KeyDef{{Name: "era", Order: podium.Desc}, {Name: "points", Order: podium.Desc}},
		Mode: podium.Sum, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsCurrent, HalfLifeDays: 1}})
	end1 := tStart // a UTC midnight: the start of an era of one day
	// Weight 3: ranks 1, 2, 3 pay 3, 2 (1.5 to even) and 1. Submitted so
	// that the slowest player is the first in the log.
	play(t, te, "t1", end1, 3, map[string]int64{"d": 30})
	te.clock.Set(end1.Add(-30 * time.Minute))
	if err := te.submit("t1", "b", 20); err != nil {
		t.Fatal(err)
	}
	if err := te.submit("t1", "a", 10); err != nil {
		t.Fatal(err)
	}
	te.clock.Set(end1)
	if _, err := tourneyOf(te.eng).SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	end2 := end1.Add(27 * 24 * time.Hour)
	play(t, te, "t2", end2, 3, map[string]int64{"c": 1})
	te.clock.Set(end2)
	rs, err := tourneyOf(te.eng).SettleDue(ctx)
	if err != nil || len(rs) != 1 || rs[0].Rebased != 3 {
		t.Fatalf("SettleDue = %+v, %v", rs, err)
	}
	p, err := te.eng.Top(ctx, engine.Query{Board: "pts:current"}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range p.Entries {
		order = append(order, e.Player)
		if e.Player != "c" && e.Keys[1] != 0 {
			t.Fatalf("%s holds %v, want 0 after 27 half-lives", e.Player, e.Keys)
		}
	}
	if fmt.Sprint(order) != "[c a b d]" {
		t.Fatalf("order %v, want [c a b d]", order)
	}
}

// TestSettleFeedEvent: a settlement run that changes payouts stores one
// "tournament settled" feed event in the same commit, naming the winner
// and the top places; a run that changes nothing stores none, and a
// re-settlement after the ranking moved stores a second one.
func TestSettleFeedEvent(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	ladder(te)
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 10, "b": 20, "c": 30})
	settled := func() []feed.Item {
		t.Helper()
		items, err := feedOf(te.eng).Feed(ctx, feed.Read{Board: "w1", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var out []feed.Item
		for _, it := range items {
			if it.Kind == podium.FeedTournamentSettled {
				out = append(out, it)
			}
		}
		return out
	}
	te.clock.Set(end)
	if _, err := tourneyOf(te.eng).SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	evs := settled()
	if len(evs) != 1 {
		t.Fatalf("after the first run: %d settled events, want 1", len(evs))
	}
	var data struct {
		Tournament string
		Run        int64
		Paid       int64
		Top        []struct {
			Player string
			Rank   int64
			Points int64
		}
	}
	if err := json.Unmarshal(evs[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if evs[0].Player != "a" || data.Tournament != "w1" || data.Run != 1 || data.Paid != 1000+500+333 ||
		len(data.Top) != 3 || data.Top[2].Player != "c" || data.Top[2].Points != 333 {
		t.Fatalf("event %+v data %+v", evs[0].FeedEvent, data)
	}
	if _, err := tourneyOf(te.eng).Settle(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if evs := settled(); len(evs) != 1 {
		t.Fatalf("a run that changed nothing stored an event: %d", len(evs))
	}
	te.restart()
	if err := te.eng.DeleteEntry(ctx, "w1", "", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := tourneyOf(te.eng).Settle(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if evs := settled(); len(evs) != 2 || evs[0].Player != "b" {
		t.Fatalf("after a re-settlement: %+v", evs)
	}
}

// TestBestByScoreHearsOfBetterTimeAtSameRank (issue 17 item 2): a better
// time that leaves a player's rank unchanged changes no payout, but it is
// a better entry, so a best board by score must take it; a run with
// nothing better credits nothing.
func TestBestByScoreHearsOfBetterTimeAtSameRank(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	te.put(&podium.Board{ID: "pts:bs", Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}}, Mode: podium.Best,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsBest, Series: "weekly", By: "score"}})
	te.put(&podium.Board{ID: "pts:br", Keys: []podium.KeyDef{{Name: "rank", Order: podium.Asc}}, Mode: podium.Best,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsBest, Series: "weekly", By: "rank"}})
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 40000, "b": 50000})
	if r, err := tourneyOf(te.eng).Settle(ctx, "w1"); err != nil || r.Credits != 4 {
		t.Fatalf("first settle = %+v, %v; want 4 credits", r, err)
	}
	if err := te.submit("w1", "b", 45000); err != nil { // still rank 2
		t.Fatal(err)
	}
	r, err := tourneyOf(te.eng).Settle(ctx, "w1")
	if err != nil || r.Changed != 0 || r.Credits != 1 {
		t.Fatalf("second settle = %+v, %v; want no payout changed, 1 credit (b's time)", r, err)
	}
	if bs := values(t, te.eng, "pts:bs"); bs["b"][0] != 45000 || bs["a"][0] != 40000 {
		t.Fatalf("best by score = %v, want a 40000, b 45000", bs)
	}
	if br := values(t, te.eng, "pts:br"); br["a"][0] != 1 || br["b"][0] != 2 {
		t.Fatalf("best by rank = %v, want a 1, b 2", br)
	}
	if r, err := tourneyOf(te.eng).Settle(ctx, "w1"); err != nil || r.Credits != 0 {
		t.Fatalf("third settle = %+v, %v; want nothing credited", r, err)
	}
	// A worse time in a later tournament of the series leaves the best.
	end2 := end.Add(2 * time.Hour)
	play(t, te, "w2", end2, 1000, map[string]int64{"b": 47000})
	te.clock.Set(end2)
	if _, err := tourneyOf(te.eng).SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if bs := values(t, te.eng, "pts:bs"); bs["b"][0] != 45000 {
		t.Fatalf("best by score after a worse time = %v, want b 45000", bs)
	}
	if br := values(t, te.eng, "pts:br"); br["b"][0] != 1 {
		t.Fatalf("best by rank after winning w2 = %v, want b 1", br)
	}
}

// TestCreditsDatedAtTheEnd (issue 17 item 3): credits carry the
// tournament's end as their "at", whenever the run, on every kind of
// points board and after a restart; "at" is the tie-break, so of two
// players level on points the one whose tournament ended first ranks
// first, even when it was settled last.
func TestCreditsDatedAtTheEnd(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	ladder(te)
	endA, endB := tStart.Add(time.Hour), tStart.Add(3*time.Hour)
	play(t, te, "a", endA, 500, map[string]int64{"x": 10})
	play(t, te, "b", endB, 500, map[string]int64{"y": 10})
	te.clock.Set(endB.Add(time.Minute))
	if _, err := tourneyOf(te.eng).Settle(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	te.clock.Set(endB.Add(time.Hour)) // a settled an hour late, after b
	if _, err := tourneyOf(te.eng).Settle(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, board := range []string{"pts:total", "pts:weekly", "pts:current", "pts:best"} {
			p, err := te.eng.Top(ctx, engine.Query{Board: board}, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Entries) != 2 {
				t.Fatalf("%s: %s has %d entries, want 2", when, board, len(p.Entries))
			}
			at := map[string]time.Time{}
			for _, e := range p.Entries {
				at[e.Player] = e.At
			}
			if !at["x"].Equal(endA) || !at["y"].Equal(endB) {
				t.Fatalf("%s: %s dates x %v, y %v; want the ends %v, %v", when, board, at["x"], at["y"], endA, endB)
			}
			if board != "pts:current" && p.Entries[0].Player != "x" { // current: a's credit decays by two hours more
				t.Fatalf("%s: %s ranks %s first; want x, whose tournament ended first", when, board, p.Entries[0].Player)
			}
		}
	}
	check("after the runs")
	te.restart()
	check("after a restart")
}

// TestCreditFeedEventsAtTheRun: a credit is dated at its tournament's end,
// but the feed events it makes (a personal best, a new leader on a points
// board) are news of the run, dated when it committed: the feed orders by
// time, and an event dated at a past end would sit behind newer ones (or,
// for a run before the end, ahead of everything until then).
func TestCreditFeedEventsAtTheRun(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	ladder(te)
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 10, "b": 20})
	run := end.Add(2 * time.Hour)
	te.clock.Set(run)
	if _, err := tourneyOf(te.eng).SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	items, err := feedOf(te.eng).Feed(ctx, feed.Read{Board: "pts:best", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		t.Fatal("no feed events on the best board")
	}
	for _, it := range items {
		if !it.At.Equal(run) {
			t.Fatalf("event %v of %s at %v, want the run's time %v", it.Kind, it.Player, it.At, run)
		}
	}
	if e := values(t, te.eng, "pts:best"); len(e) != 2 {
		t.Fatalf("best board %v", e)
	}
}
