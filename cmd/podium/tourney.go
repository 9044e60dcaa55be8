package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/aggregate"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/tournament"
)

// repairSettlements settles again, on a stopped server's store, every
// tournament whose payouts differ from its final ranks (tournament.
// Module.RepairSettlements): the part of rebuild that tournaments need.
func repairSettlements(ctx context.Context, store podium.Store) ([]string, error) {
	// The aggregates over points boards follow the credits a repair
	// writes, as on a server, and the feed gets the events of a run that
	// changed payouts (its "tournament settled", the credits' bests).
	tm := tournament.New(tournament.Config{SettleEvery: -1})
	eng := engine.New(engine.Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{aggregate.New(), feed.New(feed.Config{}), tm}})
	if err := eng.Start(ctx); err != nil {
		return nil, err
	}
	defer eng.Close()
	return tm.RepairSettlements(ctx)
}

// copyTourney copies what the tournaments of boards accumulated (joins,
// payouts, settlement status) from src to dst, after their boards. On a
// resumed migration it copies only the joins dst lacks; payouts and
// settlements are upserts. Leases are not copied: they are held only while
// a node settles, and the nodes take them afresh.
func copyTourney(ctx context.Context, src, dst podium.Store, boards []podium.Board, out io.Writer) error {
	ss, ok1 := src.(podium.TourneyStore)
	ds, ok2 := dst.(podium.TourneyStore)
	if !ok1 || !ok2 {
		return nil
	}
	sts, err := ss.Settlements(ctx)
	if err != nil {
		return err
	}
	settled := map[string]podium.Settlement{}
	for _, st := range sts {
		settled[st.Board] = st
	}
	joins, payouts := 0, 0
	for i := range boards {
		b := &boards[i]
		if b.Tournament == nil {
			continue
		}
		have, err := ds.Joins(ctx, b.ID, 0)
		if err != nil {
			return err
		}
		var after int64
		for _, j := range have {
			after = max(after, j.N)
		}
		js, err := ss.Joins(ctx, b.ID, after)
		if err != nil {
			return err
		}
		ps, err := ss.Payouts(ctx, b.ID)
		if err != nil {
			return err
		}
		tb := &podium.TourneyBatch{Joins: js, Payouts: ps}
		if st, ok := settled[b.ID]; ok {
			tb.Settlements = []podium.Settlement{st}
		}
		if tb.Len() == 0 {
			continue
		}
		if err := dst.Commit(ctx, &podium.Batch{Parts: []podium.Part{ds.TourneyPart(tb)}}); err != nil {
			return fmt.Errorf("tournament %s: %w", b.ID, err)
		}
		joins += len(js)
		payouts += len(ps)
	}
	fmt.Fprintf(out, "migrate: %d tournament joins, %d payouts and %d settlements copied\n", joins, payouts, len(sts))
	return nil
}

// tourneyRows describes every join, payout and settlement of st, by a key
// naming it, for the migration's verification.
func tourneyRows(ctx context.Context, st podium.Store) (map[string]string, error) {
	ts, ok := st.(podium.TourneyStore)
	out := map[string]string{}
	if !ok {
		return out, nil
	}
	boards, err := st.Boards(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range boards {
		if b.Tournament == nil {
			continue
		}
		js, err := ts.Joins(ctx, b.ID, 0)
		if err != nil {
			return nil, err
		}
		for _, j := range js {
			out["join "+b.ID+" "+j.Player] = fmt.Sprintf("n %d at %d", j.N, podium.Millis(j.At))
		}
		ps, err := ts.Payouts(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out["payout "+b.ID+" "+p.Player] = fmt.Sprintf("rank %d points %d at %d", p.Rank, p.Points, podium.Millis(p.At))
		}
	}
	sts, err := ts.Settlements(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sts {
		out["settlement "+s.Board] = fmt.Sprintf("at %d runs %d players %d paid %d epoch %d holder %q",
			podium.Millis(s.SettledAt), s.Runs, s.Players, s.Paid, s.Epoch, s.Holder)
	}
	return out, nil
}

// describeTourney is the tournament part of a board's description.
func describeTourney(b *podium.Board) string {
	s := ""
	if t := b.Tournament; t != nil {
		s += fmt.Sprintf(" tournament %+v", *t)
	}
	if p := b.Points; p != nil {
		s += fmt.Sprintf(" points %+v", *p)
	}
	return s
}

// reportRepaired prints the tournaments a server settled again on reload
// (POST /v1/admin/reload answers them).
func reportRepaired(w io.Writer, server string, body []byte) {
	var ans struct {
		Repaired []string `json:"settlements_repaired"`
	}
	if json.Unmarshal(body, &ans) == nil && len(ans.Repaired) > 0 {
		fmt.Fprintf(w, "rebuild: %s settled again, paying the differences: %s\n", server, strings.Join(ans.Repaired, ", "))
	}
}
