package tournament

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/scoring"
)

// CheckSettlements checks tournaments and points against the database:
//
//   - the payouts of every tournament settled since its end against the
//     points its final ranks earn (recomputed from the log: the entries a
//     start-up would load, hidden players not ranked);
//   - every total and category board against the sum of the payouts of
//     the tournaments that credit it, player by player;
//   - every best-rank board against each player's best payout rank (an
//     entry at least that good; one better is a rank since taken back);
//   - every current board against the payouts decayed to now (within
//     0.01 point: each credit and rebase rounds by at most 2^-25), and
//     that all its entries share one era.
//
// A difference in the payouts means the settlement must run again (rebuild
// does it); one on a points board with right payouts means the board was
// changed behind settlement's back. Exact on a store nobody writes.
func CheckSettlements(ctx context.Context, store podium.Store, now time.Time) ([]engine.Diff, error) {
	ts, ok := store.(podium.TourneyStore)
	if !ok {
		return nil, nil
	}
	boards, err := store.Boards(ctx)
	if err != nil {
		return nil, err
	}
	wms, err := store.Watermarks(ctx)
	if err != nil {
		return nil, err
	}
	players, err := store.Players(ctx)
	if err != nil {
		return nil, err
	}
	hidden := map[string]bool{}
	for _, p := range players {
		if p.Hidden {
			hidden[p.ID] = true
		}
	}
	sts, err := ts.Settlements(ctx)
	if err != nil {
		return nil, err
	}
	settled := map[string]podium.Settlement{}
	for _, st := range sts {
		settled[st.Board] = st
	}
	var diffs []engine.Diff
	payouts := map[string][]podium.Payout{}
	for i := range boards {
		b := &boards[i]
		t := b.Tournament
		if t == nil {
			continue
		}
		ps, err := ts.Payouts(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		payouts[b.ID] = ps
		st, ok := settled[b.ID]
		if !ok || st.SettledAt.Before(t.End) {
			continue // not final yet: the ranks may still move
		}
		want, err := finalPayouts(ctx, store, b, wms[b.ID], hidden)
		if err != nil {
			return nil, fmt.Errorf("board %s: %w", b.ID, err)
		}
		got := map[string]podium.Payout{}
		for _, p := range ps {
			got[p.Player] = p
		}
		for player, w := range want {
			g := got[player]
			if g.Rank != w.Rank || g.Points != w.Points {
				diffs = append(diffs, engine.Diff{Board: b.ID, Period: "payouts", Player: player,
					Want: fmt.Sprintf("rank %d, %d points", w.Rank, w.Points), Got: fmt.Sprintf("rank %d, %d points", g.Rank, g.Points)})
			}
		}
		for player, g := range got {
			if _, ok := want[player]; !ok && (g.Rank != 0 || g.Points != 0) {
				diffs = append(diffs, engine.Diff{Board: b.ID, Period: "payouts", Player: player,
					Want: "no payout (not ranked)", Got: fmt.Sprintf("rank %d, %d points", g.Rank, g.Points)})
			}
		}
	}
	for i := range boards {
		b := &boards[i]
		p := b.Points
		if p == nil || p.Kind == podium.PointsBest && p.By != "rank" {
			continue // best-score boards hold tournament entries: not checked here
		}
		want := map[string]float64{}
		for j := range boards {
			tb := &boards[j]
			if tb.Tournament == nil || !p.Credits(tb.Tournament) {
				continue
			}
			for _, po := range payouts[tb.ID] {
				switch p.Kind {
				case podium.PointsTotal, podium.PointsCategory:
					want[po.Player] += float64(po.Points)
				case podium.PointsBest:
					if po.Rank > 0 && (want[po.Player] == 0 || float64(po.Rank) < want[po.Player]) {
						want[po.Player] = float64(po.Rank)
					}
				case podium.PointsCurrent:
					date := podium.Millis(tb.Tournament.End) // credits are dated at the end
					h := float64(p.HalfLifeDays) * 24 * 3600 * 1000
					want[po.Player] += float64(po.Points) * math.Exp2(-float64(podium.Millis(now)-date)/h)
				}
			}
		}
		entries, err := engine.LoadedEntries(ctx, store, b, wms[b.ID])
		if err != nil {
			return nil, fmt.Errorf("board %s: %w", b.ID, err)
		}
		got := map[string]float64{}
		era := int64(math.MinInt64)
		for _, e := range entries {
			v := float64(e.Keys[0])
			if p.Kind == podium.PointsCurrent {
				h := int64(p.HalfLifeDays) * 24 * 3600 * 1000
				v = scoring.Value(e.Keys[0], e.Keys[1], podium.Millis(now), h)
				if era != math.MinInt64 && e.Keys[0] != era {
					diffs = append(diffs, engine.Diff{Board: b.ID, Period: e.Period, Player: e.Player, Want: fmt.Sprintf("era %d", era), Got: fmt.Sprintf("era %d", e.Keys[0])})
				}
				era = e.Keys[0]
			}
			got[e.Player] = v
		}
		tol := 0.0
		if p.Kind == podium.PointsCurrent {
			tol = 0.01
		}
		for player := range merged(want, got) {
			w, g := want[player], got[player]
			if p.Kind == podium.PointsBest {
				// A best board keeps the best ever: a rank taken back
				// later (an entry removed) stays; a missing or worse
				// one is a difference.
				if w > 0 && (g == 0 || g > w) {
					diffs = append(diffs, engine.Diff{Board: b.ID, Period: "points", Player: player, Want: formatPoints(w, p.Kind), Got: formatPoints(g, p.Kind)})
				}
				continue
			}
			if math.Abs(w-g) > tol {
				diffs = append(diffs, engine.Diff{Board: b.ID, Period: "points", Player: player, Want: formatPoints(w, p.Kind), Got: formatPoints(g, p.Kind)})
			}
		}
	}
	slices.SortFunc(diffs, func(a, b engine.Diff) int {
		return cmp.Or(strings.Compare(a.Board, b.Board), strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
	return diffs, nil
}

func merged(a, b map[string]float64) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func formatPoints(v float64, kind string) string {
	if kind == podium.PointsCurrent {
		return fmt.Sprintf("%.6f points now", v)
	}
	if kind == podium.PointsBest {
		if v == 0 {
			return "no entry"
		}
		return fmt.Sprintf("best rank %d", int64(v))
	}
	return fmt.Sprintf("%d points", int64(v))
}

// finalPayouts recomputes a tournament's payouts from its entries.
func finalPayouts(ctx context.Context, store podium.Store, b *podium.Board, watermark uint64, hidden map[string]bool) (map[string]podium.Payout, error) {
	entries, err := engine.LoadedEntries(ctx, store, b, watermark)
	if err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, func(e podium.Entry) bool { return hidden[e.Player] })
	orders := b.Orders()
	slices.SortFunc(entries, func(x, y podium.Entry) int { return podium.Compare(orders, &x, &y) })
	out := make(map[string]podium.Payout, len(entries))
	for i, e := range entries {
		r := int64(i + 1)
		out[e.Player] = podium.Payout{Board: b.ID, Player: e.Player, Rank: r, Points: scoring.RankPoints(b.Tournament.Weight, r)}
	}
	return out, nil
}

// RepairSettlements settles again every tournament whose payouts differ
// from its final ranks, paying the differences (the rebuild of
// settlements). Points boards changed behind settlement's back are not
// rewritten, and a tournament whose payouts disagree with its points
// boards is not settled again: check reports both. It returns the
// tournaments settled.
func (m *Module) RepairSettlements(ctx context.Context) ([]string, error) {
	diffs, err := CheckSettlements(ctx, m.store, m.host.Now())
	if err != nil {
		return nil, err
	}
	// A payout that differs from the final ranks is repaired by settling
	// again, which pays the difference to what the payout says was paid.
	// That is right when the ranks moved after the settlement (the points
	// boards then agree with the payouts), and wrong when the payout row
	// itself was damaged: a player whose points boards disagree with the
	// payouts is left to an operator, and so is their tournament.
	suspect := map[string]bool{}
	for _, d := range diffs {
		if d.Period == "points" {
			suspect[d.Player] = true
		}
	}
	skip := map[string]bool{}
	for _, d := range diffs {
		if d.Period == "payouts" && suspect[d.Player] {
			skip[d.Board] = true
		}
	}
	var ids []string
	for _, d := range diffs {
		if d.Period == "payouts" && !skip[d.Board] && (len(ids) == 0 || ids[len(ids)-1] != d.Board) {
			ids = append(ids, d.Board)
		}
	}
	for id := range skip {
		m.log.Warn("tournament payouts differ from its final ranks and from its points boards; not settled again", "board", id)
	}
	for _, id := range ids {
		if _, err := m.Settle(ctx, id); err != nil {
			return nil, fmt.Errorf("settle %s: %w", id, err)
		}
	}
	return ids, nil
}

// CheckSettlements runs the package's CheckSettlements on the engine's
// store at its clock (the admin's check).
func (m *Module) CheckSettlements(ctx context.Context) ([]engine.Diff, error) {
	diffs, err := CheckSettlements(ctx, m.store, m.host.Now())
	if err != nil {
		m.log.Error("check settlements", "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the tournaments to check them; retry shortly")
	}
	return diffs, nil
}
