package engine

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
)

// Hooks for a module with rules of its own about who may write a board and
// when (the tournaments: a window, joins, points boards only a settlement
// writes), and with writes of its own that ride in a group (a join).

// ScoreGuard admits or refuses a score on its board's own rules, at the
// core's checks (hooks.go, step 3): after the board's period and an
// approval's period, before the player is interned and before the Gates
// (a tournament refuses before a quota counts). ScoreLogged hears that
// the score was logged in g (not held for review), after an approval's
// decision: the guard may add rows of its own to g (a first score on a
// capped tournament joins the player). The candidate is the writer's,
// reused: a guard must not keep it.
type ScoreGuard interface {
	CheckScore(g *Group, c *Candidate) error
	ScoreLogged(g *Group, c *Candidate)
}

// CatchUpper brings what a module keeps of board id up to the store in
// shared mode, once a group holds the board's lock and has replayed its
// log (a tournament's joins written by other nodes). An error fails the
// group: nothing of it is applied.
type CatchUpper interface {
	CatchUp(ctx context.Context, id string) error
}

// Work is a module's change computed on the writer in a group commit, as
// a score is: Compute adds the module's rows to g (in its slot) and
// returns the change's answer as an error. Boards are the boards it
// writes: in shared mode the group locks them and catches up with them
// before it is computed.
//
// A Work that is Alone (a tournament's settlement) is a group of its own:
// the writer first lets every group before it commit and apply, computes
// it against that state, and commits and applies it before it computes
// anything sent after it. If its Compute fails, the group's log rows and
// entry changes are dropped, so none of them commits; the modules' slots
// are left as they are, so a module sets its own rows in its slot last,
// once nothing can fail.
type Work struct {
	Boards  []string
	Alone   bool
	Compute func(g *Group) error
}

// workOp is the payload of opModule.
type workOp struct{ w *Work }

// Do runs w on the writer in the next group commit, with the writes
// around it, and answers once that group is committed (or with why it
// was not: Compute's error, or the commit's).
func (e *Engine) Do(ctx context.Context, w *Work) error {
	return e.send(ctx, &op{kind: opModule, p: &workOp{w: w}})
}

// computeWork computes a module's change in g; a failed Work that runs
// alone leaves the group empty.
func (e *Engine) computeWork(g *Group, o *op) {
	w := o.work().w
	if err := w.Compute(g); err != nil {
		o.err = err
		if w.Alone {
			g.batch = podium.Batch{}
			g.changes = nil
			clear(g.overlay)
			clear(g.seqs)
		}
	}
}

// SubmitInternal computes scores in g as the core computes a client's
// (the hooks included), dated at (zero: the group's clock), with
// Internal reporting true: a ScoreGuard lets them write the boards that
// only internal writes may write (the points boards a settlement
// credits). A held score is not possible: internal scores are never held
// for review. It returns the first score's error, after which the group
// must not commit (a Work that runs alone is emptied on its error).
func (g *Group) SubmitInternal(scores []Score, at time.Time) error {
	res := make([]Result, len(scores))
	g.internal = true
	defer func() { g.internal = false }()
	for i := range scores {
		scores[i].at = at
		if err := g.e.computeScore(g, &scores[i], &res[i]); err != nil {
			return err
		}
	}
	return nil
}

// HasEntries reports whether the board has entries, in memory or only in
// the store (a module's rule about changing it).
func (bs *BoardState) HasEntries() bool { return bs.hasEntries() }

// Internal reports whether g is computing internal scores
// (SubmitInternal), which may write boards a client may not (points
// boards).
func (g *Group) Internal() bool { return g.internal }

// catchUp asks the CatchUppers to bring board id up to the store.
func (h *hooks) catchUp(ctx context.Context, id string) error {
	for _, c := range h.catchUppers {
		if err := c.CatchUp(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
