package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// MaxRestore is the most entries one Restore takes.
const MaxRestore = 1000

// RestoreItem is one entry to restore exactly (podium import): in Period,
// Player's entry becomes Keys, reached at At, with Meta.
type RestoreItem struct {
	Period string
	Player string
	Keys   []int64
	At     time.Time
	Meta   json.RawMessage
}

// RestoreResult is the answer to one RestoreItem: Restored when a restore
// row was logged (Seq), Unchanged when the entry already was exactly the
// item, or a per-item Err.
type RestoreResult struct {
	Period    string
	Player    string
	Restored  bool
	Unchanged bool
	Seq       uint64
	Err       error
}

// Restore writes entries of one board exactly as given, with their
// original times and periods (admin; podium import). It rides in a group
// commit like a score but is not one: no feed events, no quota, never
// held for review, no bounds check, and an entry already equal to the item
// writes nothing. Boards whose entries are derived or carry more than one
// value are refused as a whole (409): aggregates, boards an aggregate
// reads, best_k, points and tournament boards.
func (e *Engine) Restore(ctx context.Context, board string, items []RestoreItem) ([]RestoreResult, error) {
	if len(items) > MaxRestore {
		return nil, podium.Errorf(podium.ECodeTooLarge, "at most %d entries per restore; %d given", MaxRestore, len(items))
	}
	ro := &restoreOp{board: board, items: items, res: make([]RestoreResult, len(items))}
	o := &op{kind: opRestore, p: ro}
	if err := e.send(ctx, o); err != nil {
		return nil, err
	}
	return ro.res, nil
}

// restoreRefusal says why a board takes no restores, or nil.
func (e *Engine) restoreRefusal(def *podium.Board) error {
	why := ""
	for _, r := range e.hooks.restores { // hooks_board.go: aggregates
		if why = r.RestoreRefusal(def); why != "" {
			return podium.Errorf(podium.ECodeConflict, "board %q %s; restore refused", def.ID, why)
		}
	}
	switch {
	case def.Mode == podium.BestK:
		why = "is a best_k board: an entry is several kept results"
	case def.Points != nil:
		why = "is a points board: only tournament settlement writes it"
	case def.Tournament != nil:
		why = "is a tournament board: joins and settlement are not restored"
	default:
		return nil
	}
	return podium.Errorf(podium.ECodeConflict, "board %q %s; restore refused", def.ID, why)
}

// computeRestore queues the restore rows of one op in group g.
func (e *Engine) computeRestore(g *Group, o *op) {
	ro := o.restore()
	bs := e.board(ro.board)
	if bs == nil {
		o.err = errBoardNotFound(ro.board)
		return
	}
	def := bs.def.Load()
	if err := e.restoreRefusal(def); err != nil {
		o.err = err
		return
	}
	for i := range ro.items {
		it, res := &ro.items[i], &ro.res[i]
		res.Period, res.Player = it.Period, it.Player
		if err := e.computeRestoreItem(g, bs, def, it, res); err != nil {
			*res = RestoreResult{Period: it.Period, Player: it.Player, Err: err}
		}
	}
}

func (e *Engine) computeRestoreItem(g *Group, bs *BoardState, def *podium.Board, it *RestoreItem, res *RestoreResult) error {
	if len(it.Keys) != len(def.Keys) {
		return podium.Errorf(podium.ECodeInvalid, "board %q has %d keys; %d given", def.ID, len(def.Keys), len(it.Keys))
	}
	if !podium.ValidPeriodID(def.Reset, it.Period) {
		return podium.Errorf(podium.ECodeInvalid, "period %q is not a period id of board %q (like %s)", it.Period, def.ID, podium.PeriodAt(def.Reset, g.now).ID)
	}
	if it.At.After(g.now) {
		return podium.Errorf(podium.ECodeUnprocessable, "at %s is in the future: only current and past periods are restored", it.At.UTC().Format(time.RFC3339Nano))
	}
	if p := podium.PeriodAt(def.Reset, it.At).ID; p != it.Period {
		return podium.Errorf(podium.ECodeUnprocessable, "at %s falls in period %s, not %s", it.At.UTC().Format(time.RFC3339Nano), p, it.Period)
	}
	if err := g.Hold(bs, it.Period); err != nil {
		return err
	}
	pid := e.players.intern(it.Player)
	k := ovKey{bs, it.Period, pid}
	meta := podium.StoredMeta(it.Meta)
	at := it.At.UnixMilli()
	cur := g.current(k)
	if cur.exists && cur.entry.At == at && slices.Equal(cur.entry.Keys[:len(def.Keys)], it.Keys) && bytes.Equal(podium.StoredMeta(cur.meta), meta) {
		res.Unchanged = true
		return nil
	}
	seq := g.nextSeq(bs)
	g.seqs[bs] = seq
	g.batch.Submissions = append(g.batch.Submissions, podium.Submission{Seq: seq, Board: def.ID, Period: it.Period,
		Player: it.Player, Kind: podium.KindRestore, Keys: it.Keys, At: podium.FromMillis(at), Meta: meta})
	c := change{bs: bs, period: it.Period, player: pid, changed: true, res: &Result{}, meta: meta}
	c.entry = rank.Entry{Player: pid, At: at, Seq: seq, Hidden: e.players.hidden(pid)}
	copy(c.entry.Keys[:], it.Keys)
	g.overlay[k] = ovVal{entry: c.entry, meta: meta, exists: true}
	g.changes = append(g.changes, c)
	// No feed event, but the #1 the feed tracks may have changed: it is
	// worked out again when a score next needs it (feed/).
	e.hooks.entryReset(g, bs, it.Period) // hooks_feed.go
	res.Restored, res.Seq = true, seq
	return nil
}
