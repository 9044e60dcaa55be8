package engine

import (
	"time"

	"github.com/podiumhq/podium"
)

// The write path's hook points. A feature module (a package of its own,
// registered in cmd/podium's wiring through Config.Modules) implements the
// ones it needs; the core finds them by type assertion when it is made and
// calls them on the writer goroutine, in the order the modules were
// registered. For each score of a group the writer runs:
//
//  1. Preparer.Prepare, once per group before its first score: batch the
//     reads the group's gates will need (quota counts of new players).
//  2. Validator.Validate: refusals that depend on the score and its board
//     alone (key bounds), before anything else is looked at.
//  3. the core's checks: the board's period (loaded if it must be), a
//     Rider's Admit (an approval's period, hooks_review.go); then
//     ScoreGuard.CheckScore (hooks_tourney.go): the tournament window and
//     joins, points boards.
//  4. Gate.Admit: refusals that depend on state (a quota), once the score
//     is known to be otherwise valid.
//  5. the core applies the score to the entry (podium.Apply); Holder.Hold
//     may hold it (review, hooks_review.go: then nothing below runs), and
//     Effect.Derive computes what follows (aggregates).
//  6. Gate's Logged: the score is logged in this group (count it); then
//     a Rider's Logged (the approval recorded in the group), then
//     ScoreGuard.ScoreLogged (a join).
//  7. Scorer.Scored: the logged score against the entry before it (the
//     feed's events; hooks_feed.go).
//
// The order is behaviour: a bound refuses before a tournament does, and a
// quota counts only a score that is logged. After a group fails to commit,
// Forgetter.Forget drops whatever state was derived from groups not
// stored, and Replayer.Replayed hears a submission another node logged
// (shared mode, catch-up). What a module keeps per board it keeps in the
// board's slot (BoardState.Slot), which goes with the board.

// Module is a feature that registers with the core.
type Module interface {
	// Name identifies the module in logs and errors.
	Name() string
}

// Candidate is a score on its way through the writer, as a hook sees it.
type Candidate struct {
	Board  *BoardState
	Def    *podium.Board // the board's definition for this group
	Period string        // the period the score goes in
	Player string
	Keys   []int64
	Now    time.Time // the group's clock reading
}

// Preparer batches, once per group, the reads the group's gates need.
// scores is the writer's buffer, reused for the next group: a Preparer
// must not keep it.
type Preparer interface {
	Prepare(now time.Time, scores []Candidate)
}

// Validator refuses a score on its board's definition alone.
type Validator interface {
	Validate(def *podium.Board, keys []int64) error
}

// Gate admits or refuses a score on state it keeps, and hears when an
// admitted score is logged in the group.
type Gate interface {
	Admit(c *Candidate) error
	Logged(c *Candidate)
}

// Effect derives further changes in the same group from a change of a
// player's entry (an aggregate's new value): Derive computes them against
// the group without changing it, and the core adds them (Group.Write) once
// the source change is logged. An error refuses the source change.
type Effect interface {
	Derive(g *Group, src *Source) ([]Write, error)
}

// Forgetter drops state derived from groups that were not stored (after a
// failed commit, with nothing pending).
type Forgetter interface {
	Forget()
}

// Replayer hears about a submission another node logged, replayed by
// this node's catch-up (shared mode).
type Replayer interface {
	Replayed(b *BoardState, def *podium.Board, s *podium.Submission)
}

// hooks holds the registered modules by hook point, in registration order.
type hooks struct {
	modules    []Module
	preparers  []Preparer
	validators []Validator
	gates      []Gate
	effects    []Effect
	holders    []Holder       // hooks_review.go
	watchers   []BoardWatcher // hooks_board.go
	guards     []BoardGuard
	putters    []BoardPutter
	lockers    []Locker
	restores   []RestoreGuard
	boardRows  []BoardPartMaker
	parts      []PartMaker // hooks_commit.go
	finishers  []Finisher
	sinks      []EventSink
	signals    []SignalSink // hooks_signal.go
	scorers    []Scorer     // hooks_feed.go
	resetters  []EntryResetter
	handOffers []HandOffer
	forgetters []Forgetter
	replayers  []Replayer

	scoreGuards []ScoreGuard // hooks_tourney.go
	catchUppers []CatchUpper
}

func newHooks(ms []Module) hooks {
	var h hooks
	for _, m := range ms {
		h.modules = append(h.modules, m)
		if x, ok := m.(Preparer); ok {
			h.preparers = append(h.preparers, x)
		}
		if x, ok := m.(Validator); ok {
			h.validators = append(h.validators, x)
		}
		if x, ok := m.(Gate); ok {
			h.gates = append(h.gates, x)
		}
		if x, ok := m.(Effect); ok {
			h.effects = append(h.effects, x)
		}
		if x, ok := m.(Holder); ok {
			h.holders = append(h.holders, x)
		}
		if x, ok := m.(BoardWatcher); ok {
			h.watchers = append(h.watchers, x)
		}
		if x, ok := m.(BoardGuard); ok {
			h.guards = append(h.guards, x)
		}
		if x, ok := m.(BoardPutter); ok {
			h.putters = append(h.putters, x)
		}
		if x, ok := m.(Locker); ok {
			h.lockers = append(h.lockers, x)
		}
		if x, ok := m.(RestoreGuard); ok {
			h.restores = append(h.restores, x)
		}
		if x, ok := m.(BoardPartMaker); ok {
			h.boardRows = append(h.boardRows, x)
		}
		if x, ok := m.(ScoreGuard); ok {
			h.scoreGuards = append(h.scoreGuards, x)
		}
		if x, ok := m.(CatchUpper); ok {
			h.catchUppers = append(h.catchUppers, x)
		}
		if x, ok := m.(PartMaker); ok {
			h.parts = append(h.parts, x)
		}
		if x, ok := m.(Finisher); ok {
			h.finishers = append(h.finishers, x)
		}
		if x, ok := m.(EventSink); ok {
			h.sinks = append(h.sinks, x)
		}
		if x, ok := m.(SignalSink); ok {
			h.signals = append(h.signals, x)
		}
		if x, ok := m.(Scorer); ok {
			h.scorers = append(h.scorers, x)
		}
		if x, ok := m.(EntryResetter); ok {
			h.resetters = append(h.resetters, x)
		}
		if x, ok := m.(HandOffer); ok {
			h.handOffers = append(h.handOffers, x)
		}
		if x, ok := m.(Forgetter); ok {
			h.forgetters = append(h.forgetters, x)
		}
		if x, ok := m.(Replayer); ok {
			h.replayers = append(h.replayers, x)
		}
	}
	return h
}

// Def returns the board's current definition.
func (bs *BoardState) Def() *podium.Board { return bs.def.Load() }

// AppliedSeq returns the last seq applied to the board's indexes: a read
// of the store up to it sees exactly what the indexes hold.
func (bs *BoardState) AppliedSeq() uint64 {
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	return bs.seq
}

// Slot returns what module m keeps with this board, nil at first. The
// writer's alone, like SetSlot.
func (bs *BoardState) Slot(m Module) any { return bs.slots[m] }

// SetSlot keeps v with this board for module m.
func (bs *BoardState) SetSlot(m Module, v any) {
	if bs.slots == nil {
		bs.slots = map[Module]any{}
	}
	bs.slots[m] = v
}

// prepare runs the Preparers over a group's scores on existing boards that
// take scores (not aggregates).
func (e *Engine) prepare(now time.Time, ops []*op) {
	if len(e.hooks.preparers) == 0 {
		return
	}
	cs := e.prepared[:0] // the writer's; no Preparer keeps it
	for _, o := range ops {
		if o.kind != opScores || o.err != nil {
			continue
		}
		for i := range o.scores {
			s := &o.scores[i]
			bs := e.board(s.Board)
			if bs == nil {
				continue
			}
			def := bs.def.Load()
			if def.Aggregate != nil {
				continue
			}
			cs = append(cs, Candidate{Board: bs, Def: def, Player: s.Player, Keys: s.Keys, Now: now})
		}
	}
	for _, p := range e.hooks.preparers {
		p.Prepare(now, cs)
	}
	clear(cs) // let the boards go
	e.prepared = cs[:0]
}

// forget tells the Forgetters that a group failed to commit.
func (h *hooks) forget() {
	for _, f := range h.forgetters {
		f.Forget()
	}
}

// replayed tells the Replayers about a submission another node logged.
func (h *hooks) replayed(bs *BoardState, def *podium.Board, s *podium.Submission) {
	for _, r := range h.replayers {
		r.Replayed(bs, def, s)
	}
}

// derive asks the Effects what follows from a change of a player's entry
// (next; Exists false: deleted), against the group so far.
func (h *hooks) derive(g *Group, bs *BoardState, period, player string, pid uint32, next Value) ([]Write, error) {
	if len(h.effects) == 0 {
		return nil, nil
	}
	src := &g.src // reused: a hook must not keep it
	*src = Source{Board: bs, Period: period, Player: player, PID: pid, Next: next}
	var out []Write
	for _, ef := range h.effects {
		ws, err := ef.Derive(g, src)
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	return out, nil
}
