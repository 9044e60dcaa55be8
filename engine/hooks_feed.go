package engine

import (
	"context"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Hook points of a module that derives from each score the state of a
// whole period (the activity feed, feed/, tracks each period's #1), and
// keeps that state across the groups of the pipeline.
//
// A group handed to the committer is computed on but not yet applied to
// the indexes; the next group is computed against it (single node,
// pipeline.go). The core carries its entries in its pending overlay; a
// module carries what it derived from them itself: at HandedOff it keeps
// the group's state keyed by the group's generation (Group.Gen), which a
// later group reads instead of the index, and drops it once that group is
// applied (Finisher.Finished with err nil: only if no later group replaced
// it, which the generation tells) or failed (Forgetter.Forget, after the
// pipeline was reset). A module that cannot work its state out from what
// is pending waits for the committer (Group.WaitApplied) and reads the
// index (BoardState.Ranked) with the group's own changes on top
// (Group.Changed, Group.EachChanged). In shared mode each group is applied
// before the next is computed: nothing is handed off and nothing pending.

// Scorer hears each score of a group, once it is logged in the group and
// before the group's overlay holds its new entry: Old is the entry it was
// computed against. Hooks run in registration order; a Scorer must not
// keep s, which is reused for the next score.
type Scorer interface {
	Scored(g *Group, s *Scored)
}

// Scored is a logged score as a Scorer sees it.
type Scored struct {
	Board   *BoardState
	Def     *podium.Board
	Period  string
	Player  string // the player's id
	PID     uint32 // and its interned id
	Seq     uint64 // the score's seq
	Changed bool   // the score changed the entry (New is then the entry)
	Old     Value  // the entry before the score
	New     rank.Entry
}

// EntryResetter hears that an entry of a period changed other than by a
// score (an admin's delete, a restore), so that what a module derived
// about the whole period may no longer hold.
type EntryResetter interface {
	EntryReset(g *Group, bs *BoardState, period string)
}

// HandOffer hears that a group was handed to the committer (single node),
// before the committer can finish it.
type HandOffer interface {
	HandedOff(g *Group)
}

// Gen is the group's generation: it grows with each group handed to the
// committer (0 until the group is handed off, and in shared mode).
func (g *Group) Gen() uint64 { return g.gen }

// WaitApplied waits until every group handed to the committer before this
// one is applied to the indexes (single node; in shared mode they all are
// already). On the writer only.
func (g *Group) WaitApplied() {
	if g.e.sh == nil {
		g.e.pl.barrier()
	}
}

// Changed reports whether the group changed a player's entry of a period.
func (g *Group) Changed(bs *BoardState, period string, pid uint32) bool {
	_, ok := g.overlay[ovKey{bs, period, pid}]
	return ok
}

// EachChanged calls fn with each entry of a period the group changed
// (Exists false: deleted), in no order.
func (g *Group) EachChanged(bs *BoardState, period string, fn func(pid uint32, v Value)) {
	for k, v := range g.overlay {
		if k.bs == bs && k.period == period {
			fn(k.player, v.value())
		}
	}
}

// Ranked calls fn with the visible entries of a period as the index holds
// them, best first, until fn returns false. fn runs under the board's read
// lock: it must not call back into the board.
func (bs *BoardState) Ranked(period string, fn func(en rank.Entry) bool) {
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	if ps := bs.periods[period]; ps != nil {
		ps.idx.Range(1, ps.idx.Len(), false, func(_ int, en rank.Entry) bool { return fn(en) })
	}
}

// RankedPIDs returns the interned ids of the visible entries of a period
// of board id, best first, as the index holds them, loading an old period
// from the store as a read does. It runs off the writer, under the
// board's read lock only for the copy (O(entries), no call back into the
// engine): for work that ranks a closed period outside the writer and
// checks it there (a league settlement, league/settle.go). Errors: those
// of a read.
func (e *Engine) RankedPIDs(ctx context.Context, id, period string) ([]uint32, error) {
	var pids []uint32
	err := e.view(ctx, Query{Board: id, Period: period}, func(_ *BoardState, _ *podium.Board, _ string, ps *periodState) error {
		if ps == nil {
			return nil
		}
		pids = make([]uint32, 0, ps.idx.Len())
		ps.idx.Range(1, ps.idx.Len(), false, func(_ int, en rank.Entry) bool { pids = append(pids, en.Player); return true })
		return nil
	})
	return pids, err
}

// PlayerIDs returns the ids of players by interned id, a few thousand
// under each hold of the intern table's read lock (a settlement names a
// million while the writer interns new players).
func (e *Engine) PlayerIDs(pids []uint32) []string {
	out := make([]string, 0, len(pids))
	buf := make([]nameView, 0, 4096)
	for i := 0; i < len(pids); i += cap(buf) {
		for _, v := range e.players.view(pids[i:min(i+cap(buf), len(pids))], buf[:0]) {
			out = append(out, v.Player)
		}
	}
	return out
}

// Gen tells this incarnation of the board from one deleted and made again.
func (bs *BoardState) Gen() uint64 { return bs.gen }

// scored tells the Scorers about a logged score.
func (h *hooks) scored(g *Group, c *change, cur ovVal, sub *podium.Submission, def *podium.Board, player string) {
	if len(h.scorers) == 0 {
		return
	}
	s := &g.scored // reused: a hook must not keep it
	*s = Scored{Board: c.bs, Def: def, Period: c.period, Player: player, PID: c.player, Seq: sub.Seq,
		Changed: c.changed, Old: cur.value(), New: c.entry}
	for _, x := range h.scorers {
		x.Scored(g, s)
	}
}

// entryReset tells the EntryResetters that an entry of a period changed
// other than by a score.
func (h *hooks) entryReset(g *Group, bs *BoardState, period string) {
	for _, x := range h.resetters {
		x.EntryReset(g, bs, period)
	}
}

// handedOff tells the HandOffers that g was handed to the committer.
func (h *hooks) handedOff(g *Group) {
	for _, x := range h.handOffers {
		x.HandedOff(g)
	}
}

// OnWriter runs fn on the writer between groups, once the commit pipeline
// holds nothing (every group before it is committed and applied): for a
// module's commit of its own rows (Batch.Parts) outside any group. Errors:
// those of a write the engine does not take now (ECodeUnavailable).
func (e *Engine) OnWriter(ctx context.Context, fn func()) error {
	return e.send(ctx, &op{kind: opFunc, p: fn})
}

// PlayerHidden reports whether a player (by id) is known and hidden from
// rankings.
func (e *Engine) PlayerHidden(player string) bool {
	pid, ok := e.players.lookup(player)
	return ok && e.players.hidden(pid)
}

// PlayerName is a player's name now (its id when it has none).
func (e *Engine) PlayerName(player string) string {
	if pid, ok := e.players.lookup(player); ok {
		return e.players.name(pid).Name
	}
	return player
}

// BoardStates returns the state of every board.
func (e *Engine) BoardStates() []*BoardState { return e.boardStates() }
