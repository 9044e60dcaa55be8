package engine

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// What a module sees of a group commit being computed (hooks.go): the
// entries as of everything computed so far, and a way to add rows of its
// own to the group. Every method runs on the writer.

// Value is one player's entry as of the state so far: Exists false means
// no entry. Entry.Player is the player's interned id, Entry.At is in
// milliseconds.
type Value struct {
	Entry   rank.Entry
	Exists  bool
	Results []podium.Result // best_k boards: the kept results
}

// Write is a row a module adds to a group on a board it derives (an
// aggregate's new value for a player): logged in the same commit as the
// change it follows from, and applied to the board's index with it.
type Write struct {
	Board  *BoardState
	Period string
	Player string // the player's id
	PID    uint32 // and its interned id
	// Value is the new entry (its Seq is assigned by the group); Exists
	// false deletes the entry.
	Value Value
}

// Source is a change of one player's entry that an Effect may derive
// further changes from: Next is the entry after it (Exists false: the
// entry was deleted).
type Source struct {
	Board  *BoardState
	Period string
	Player string
	PID    uint32
	Next   Value
}

// Now is the group's clock reading: the time of its rows.
func (g *Group) Now() time.Time { return g.now }

// Board returns the state of board id, nil if there is none.
func (g *Group) Board(id string) *BoardState { return g.e.board(id) }

// Hold makes sure a period of a board is in memory for the rest of the
// group (loading it from the store if it must), so that Current and Write
// see and change the whole period.
func (g *Group) Hold(bs *BoardState, period string) error { return g.e.old.hold(g, bs, period) }

// Current returns a player's entry as of the group so far.
func (g *Group) Current(bs *BoardState, period string, pid uint32) Value {
	return g.current(ovKey{bs, period, pid}).value()
}

// Hidden reports whether a player (by interned id) is hidden from rankings.
func (g *Group) Hidden(pid uint32) bool { return g.e.players.hidden(pid) }

// PlayerID returns the id of a player by interned id.
func (g *Group) PlayerID(pid uint32) string { return g.e.players.name(pid).Player }

// PID returns the interned id of a player, ok false if the engine has
// never seen the player.
func (g *Group) PID(player string) (pid uint32, ok bool) { return g.e.players.lookup(player) }

// LastSeq returns the last seq of a board as of the group so far: its own
// rows, then groups not applied yet, then the index.
func (g *Group) LastSeq(bs *BoardState) uint64 { return g.nextSeq(bs) - 1 }

// Write adds a derived row to the group: a log row on w.Board with the
// whole new value (or a delete), the entry in the overlay, and the change
// to apply once committed.
func (g *Group) Write(w Write) {
	bs := w.Board
	def := bs.def.Load()
	seq := g.nextSeq(bs)
	g.seqs[bs] = seq
	k := ovKey{bs, w.Period, w.PID}
	if !w.Value.Exists {
		g.batch.Submissions = append(g.batch.Submissions, podium.Submission{Seq: seq, Board: def.ID, Period: w.Period,
			Player: w.Player, Kind: podium.KindDelete, At: g.now})
		g.overlay[k] = ovVal{}
		g.changes = append(g.changes, change{bs: bs, period: w.Period, player: k.player, del: true, delSeq: seq})
		return
	}
	v := ovVal{entry: w.Value.Entry, exists: true, results: w.Value.Results}
	v.entry.Player, v.entry.Seq = w.PID, seq
	g.batch.Submissions = append(g.batch.Submissions, podium.Submission{Seq: seq, Board: def.ID, Period: w.Period,
		Player: w.Player, At: podium.FromMillis(v.entry.At), Keys: append([]int64(nil), v.entry.Keys[:len(def.Keys)]...)})
	g.overlay[k] = v
	// res: applyChanges fills in an answer for every change; nobody reads
	// this one.
	g.changes = append(g.changes, change{bs: bs, period: w.Period, player: k.player, entry: v.entry, changed: true, res: &Result{}})
}

// Players returns the interned ids of the players with an entry in a
// period of a board, loading the period from the store if it is not in
// memory (without keeping it there).
func (g *Group) Players(bs *BoardState, period string) ([]uint32, error) {
	loaded, err := g.e.loadLazy(context.Background(), bs, period)
	if err != nil {
		return nil, err
	}
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	if loaded != nil {
		loaded.readers.Add(-1) // the read lock keeps it now
	}
	ps := bs.periods[period]
	if ps == nil {
		return nil, nil
	}
	ids := make([]uint32, 0, ps.idx.Len())
	ps.idx.Range(1, ps.idx.Len(), true, func(_ int, en rank.Entry) bool {
		ids = append(ids, en.Player)
		return true
	})
	return ids, nil
}

// PeriodsWithEntries lists the periods of the board that have entries, in
// memory or only in the store, sorted.
func (bs *BoardState) PeriodsWithEntries() []string {
	bs.mu.RLock()
	set := map[string]bool{}
	for p, ps := range bs.periods {
		if ps.idx.Len() > 0 {
			set[p] = true
		}
	}
	for p, n := range bs.known {
		if n > 0 {
			set[p] = true
		}
	}
	bs.mu.RUnlock()
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the state of board id, nil if there is none: for a
// module's reads outside a group.
func (e *Engine) Lookup(id string) *BoardState { return e.board(id) }

// AggregateDefs returns the definitions of the aggregate boards, from
// memory, by id (a fresh map the caller may change).
func (e *Engine) AggregateDefs() map[string]*podium.Board {
	list := e.kind(aggBoards)
	defs := make(map[string]*podium.Board, len(list)+1)
	for _, bs := range list {
		def := bs.def.Load()
		defs[def.ID] = def
	}
	return defs
}

// Intern returns the interned id of a player, adding it: for a module that
// writes the entry of an id no score brought yet (a group's entry on a
// group board).
func (g *Group) Intern(player string) uint32 { return g.e.players.intern(player) }
