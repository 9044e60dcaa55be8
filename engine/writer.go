package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Score is one submission as the engine takes it.
type Score struct {
	Board  string
	Player string
	Keys   []int64
	Meta   json.RawMessage

	// rider: what the module that submitted this score carries with it
	// (Exclusive.Submit, hooks_review.go: an approval); the score is
	// never held.
	rider Rider

	// at: the date of an internal score (Group.SubmitInternal: a
	// settlement's credit, dated at the tournament's end); zero means the
	// writer's clock, as for every client's score.
	at time.Time
}

// Result is the answer to one Score.
type Result struct {
	Board    string
	Period   string
	Player   string
	Improved bool
	Seq      uint64
	Entry    EntryView
	Previous *EntryView
	Err      error // a per-item failure; the other fields are then empty
	// Reconstructed: the answer was lost after its writes were committed,
	// and this one was rebuilt (see Idempotency.Reconstruct): Entry is the
	// entry now, Previous unknown.
	Reconstructed bool
	// Held: the score was held for review (a Holder, hooks_review.go) and not applied;
	// only Board, Period and Player are set besides.
	Held *podium.ReviewItem
}

type opKind uint8

const (
	opScores opKind = iota
	opDeleteEntry
	opPutBoard
	opDeleteBoard
	opPutPlayer
	opReload
	opCheck
	opFunc   // run fn on the writer (tests drive checkpoints this way)
	opSync   // shared mode: apply what other nodes changed
	opModule // a module's Work (hooks_tourney.go): rides in a group like a score, or alone

	opRestore // restored entries of one board (restore.go): rides in a group like a score
)

// op is one request to the writer.
type op struct {
	kind    opKind
	single  bool // a single submit: its one error fails the whole op
	scores  []Score
	results []Result
	claim   *Claim
	// p is the payload of every kind but opScores: *deleteEntryOp,
	// *putBoardOp, a board id (opDeleteBoard), *podium.Player, *checkOp,
	// func() (opFunc), *syncOp, *workOp or
	// *restoreOp (ops.go). Scores, the hot path, keep their fields.
	p    any
	err  error
	done chan struct{}
}

func (o *op) size() int {
	if o.kind == opScores {
		return len(o.scores)
	}
	if o.kind == opRestore {
		return len(o.restore().items)
	}
	return 1
}

// Submit applies scores and answers once they are durably committed. With
// single set, the one score's error is returned as the error; otherwise
// per-item errors are in the results. claim, if not nil, is remembered in
// the same transaction.
func (e *Engine) Submit(ctx context.Context, scores []Score, single bool, claim *Claim) ([]Result, error) {
	o := &op{kind: opScores, single: single, scores: scores, results: make([]Result, len(scores)), claim: claim}
	if err := e.send(ctx, o); err != nil {
		return nil, err
	}
	return o.results, nil
}

// change is one entry change computed before the commit and applied after.
type change struct {
	bs      *BoardState
	period  string
	player  uint32
	entry   rank.Entry
	meta    json.RawMessage
	results []podium.Result // best_k
	del     bool
	delSeq  uint64 // the seq of a delete
	changed bool
	res     *Result
}

// bpKey names one period of one board.
type bpKey struct {
	bs     *BoardState
	period string
}

// group is one group commit on its way through the pipeline.
type Group struct {
	e       *Engine
	gen     uint64
	ops     []*op
	now     time.Time
	batch   podium.Batch
	bodies  []podium.IdempotencyRecord // answers of earlier requests riding along
	changes []change
	overlay map[ovKey]ovVal
	seqs    map[*BoardState]uint64
	periods map[*BoardState]string
	held    map[bpKey]struct{} // periods kept in memory until it is finished (oldperiods.go)

	internal bool // computing internal scores (Group.SubmitInternal, Group.Internal)

	cand   Candidate // the score the hooks are looking at (hooks.go)
	src    Source    // the change the Effects are looking at (hooks.go)
	scored Scored    // the score the Scorers are looking at (hooks_feed.go)

	slots map[Module]any // what modules keep with the group (hooks_commit.go)
	one   [1]*Group      // the group alone, as the PartMakers take it

	housekeeping bool          // not a group: run housekeeping on the committer
	barrier      chan struct{} // not a group: closed when the committer reaches it

	err error // why the group failed
}

// computeGroup computes a group of score and delete ops against memory
// and hands it to the committer.
func (e *Engine) computeGroup(ops []*op) {
	e.pl.recover()
	e.pl.handOff(e.buildGroup(ops))
}

// buildGroup computes a group of score and delete ops against the state so
// far. Ops that already carry an error are answered with it and skipped.
func (e *Engine) buildGroup(ops []*op) *Group {
	g := &Group{e: e, ops: append([]*op(nil), ops...), now: e.now(), overlay: map[ovKey]ovVal{}, seqs: map[*BoardState]uint64{}, periods: map[*BoardState]string{}}
	e.prepare(g.now, ops) // hooks.go
	for _, o := range ops {
		if o.err != nil {
			continue
		}
		if o.kind == opDeleteEntry {
			e.computeDelete(g, o)
			continue
		}
		if o.kind == opModule { // hooks_tourney.go
			e.computeWork(g, o)
			continue
		}
		if o.kind == opRestore { // restore.go
			e.computeRestore(g, o)
			continue
		}
		for i := range o.scores {
			if err := e.computeScore(g, &o.scores[i], &o.results[i]); err != nil {
				o.results[i] = Result{Err: err}
			}
		}
		if o.single && o.results[0].Err != nil {
			o.err = o.results[0].Err
			continue
		}
		if o.claim != nil {
			g.batch.Idempotency = append(g.batch.Idempotency, o.claim.marker(o.results))
		}
	}
	g.bodies = e.idem.takePending()
	g.batch.Idempotency = append(g.batch.Idempotency, g.bodies...)
	g.one[0] = g
	e.seal(&g.batch, g.one[:]) // hooks_commit.go
	return g
}

// computeScore validates one score against its board and computes its
// effect on top of the state so far; the change is queued for the commit.
func (e *Engine) computeScore(g *Group, s *Score, res *Result) error {
	bs := e.board(s.Board)
	if bs == nil {
		return errBoardNotFound(s.Board)
	}
	def := bs.def.Load()
	if def.Aggregate != nil {
		return errAggregateWrite(def.ID)
	}
	if len(s.Keys) != len(def.Keys) {
		return podium.Errorf(podium.ECodeInvalid, "board %q has %d keys; %d given", def.ID, len(def.Keys), len(s.Keys))
	}
	for _, v := range e.hooks.validators { // hooks.go: key bounds
		if err := v.Validate(def, s.Keys); err != nil {
			return err
		}
	}
	period, ok := g.periods[bs]
	if !ok {
		period = podium.PeriodAt(def.Reset, g.now).ID
		// The current period may exist in the store without being loaded
		// (the clock went back past the previous period): load it, or the
		// score would be computed against nothing and its index would
		// hide the stored one.
		if err := g.Hold(bs, period); err != nil {
			return err
		}
		g.periods[bs] = period
	}
	if s.rider != nil { // hooks_review.go: an approval's period
		if err := s.rider.Admit(period); err != nil {
			return err
		}
	}
	cand := &g.cand // reused: a hook must not keep it
	*cand = Candidate{Board: bs, Def: def, Period: period, Player: s.Player, Keys: s.Keys, Now: g.now}
	for _, sg := range e.hooks.scoreGuards { // hooks_tourney.go: window, joins, points boards
		if err := sg.CheckScore(g, cand); err != nil {
			return err
		}
	}
	pid, hidden := e.players.internHidden(s.Player)
	for _, gt := range e.hooks.gates { // hooks.go: quotas
		if err := gt.Admit(cand); err != nil {
			return err
		}
	}
	k := ovKey{bs, period, pid}
	cur := g.current(k)
	seq := g.nextSeq(bs)
	at := g.now
	if !s.at.IsZero() {
		at = s.at
	}
	sub := podium.Submission{Seq: seq, Board: def.ID, Period: period, Player: s.Player, Kind: podium.KindScore,
		Keys: s.Keys, At: at, Meta: s.Meta}
	var curEntry *podium.Entry
	if cur.exists {
		curEntry = &podium.Entry{Keys: cur.entry.Keys[:len(def.Keys)], At: podium.FromMillis(cur.entry.At), Seq: cur.entry.Seq, Meta: cur.meta, Results: cur.results}
	}
	next, changed, err := podium.Apply(def, curEntry, &sub)
	if err != nil {
		return err
	}
	if s.rider == nil && !g.internal && len(e.hooks.holders) > 0 { // hooks_review.go: held, not applied
		if it := e.hooks.hold(g, cand, Applied{PID: pid, Meta: s.Meta, Next: next, Changed: changed}); it != nil {
			*res = Result{Board: def.ID, Period: period, Player: s.Player, Held: it}
			return nil
		}
	}
	var derived []Write // hooks.go: what Effects derive (aggregates)
	if changed && len(e.hooks.effects) > 0 {
		nv := Value{Entry: rank.Entry{Player: pid, At: next.At.UnixMilli(), Seq: next.Seq}, Exists: true, Results: next.Results}
		copy(nv.Entry.Keys[:], next.Keys)
		if derived, err = e.hooks.derive(g, bs, period, s.Player, pid, nv); err != nil {
			return err
		}
	}
	g.seqs[bs] = seq
	g.batch.Submissions = append(g.batch.Submissions, sub)
	for _, gt := range e.hooks.gates { // counted in the commit that logs it
		gt.Logged(cand)
	}
	if s.rider != nil {
		s.rider.Logged(g, seq) // hooks_review.go: an approval's decision
	}
	for _, sg := range e.hooks.scoreGuards { // hooks_tourney.go: a first score on a capped tournament joins
		sg.ScoreLogged(g, cand)
	}
	*res = Result{Board: def.ID, Period: period, Player: s.Player, Improved: changed, Seq: seq}
	c := change{bs: bs, period: period, player: pid, changed: changed, res: res}
	if changed {
		if !hasMeta(next.Meta) {
			next.Meta = nil
		}
		c.entry = rank.Entry{Player: pid, At: next.At.UnixMilli(), Seq: next.Seq, Hidden: hidden}
		copy(c.entry.Keys[:], next.Keys)
		c.meta = next.Meta
		c.results = next.Results
	}
	e.hooks.scored(g, &c, cur, &sub, def, s.Player) // hooks_feed.go: the feed's events, against the state before c
	if changed {
		g.overlay[k] = ovVal{entry: c.entry, meta: c.meta, exists: true, results: c.results}
	}
	g.changes = append(g.changes, c)
	for _, w := range derived {
		g.Write(w)
	}
	return nil
}

// computeDelete queues the removal of one entry (admin).
func (e *Engine) computeDelete(g *Group, o *op) {
	do := o.deleteEntry()
	bs := e.board(do.ref.Board)
	if bs == nil {
		o.err = errBoardNotFound(do.ref.Board)
		return
	}
	def := bs.def.Load()
	if def.Aggregate != nil {
		o.err = errAggregateWrite(def.ID)
		return
	}
	period, err := e.ResolvePeriod(def, do.ref.Period)
	if err != nil {
		o.err = err
		return
	}
	if def.PeriodExpired(g.now, period) { // retention.go: as a period without entries
		o.err = podium.Errorf(podium.ECodeEntryNotFound, "player %q has no entry on board %q in period %s", do.ref.Player, def.ID, period)
		return
	}
	if err := g.Hold(bs, period); err != nil {
		o.err = err
		return
	}
	pid, ok := e.players.lookup(do.ref.Player)
	k := ovKey{bs, period, pid}
	if !ok || !g.current(k).exists {
		o.err = podium.Errorf(podium.ECodeEntryNotFound, "player %q has no entry on board %q in period %s", do.ref.Player, def.ID, period)
		return
	}
	derived, err := e.hooks.derive(g, bs, period, do.ref.Player, pid, Value{}) // hooks.go
	if err != nil {
		o.err = err
		return
	}
	seq := g.nextSeq(bs)
	g.seqs[bs] = seq
	g.batch.Submissions = append(g.batch.Submissions, podium.Submission{Seq: seq, Board: def.ID, Period: period,
		Player: do.ref.Player, Kind: podium.KindDelete, At: g.now})
	g.overlay[k] = ovVal{}
	e.hooks.entryReset(g, bs, period) // hooks_feed.go
	g.changes = append(g.changes, change{bs: bs, period: period, player: pid, del: true, delSeq: seq})
	for _, w := range derived {
		g.Write(w)
	}
}

func (e *Engine) flushIdempotency() {
	recs := e.idem.takePending()
	if len(recs) == 0 {
		return
	}
	if err := e.store.Commit(context.Background(), &podium.Batch{Idempotency: recs}); err != nil {
		e.log.Warn("store idempotency answers", "err", err)
		e.health.commitFailed(err, errors.Is(err, podium.ErrOutcomeUnknown))
		e.idem.requeue(recs)
		return
	}
	e.idem.stored(recs)
}

func errAggregateWrite(id string) error {
	return podium.Errorf(podium.ECodeConflict, "board %q is an aggregate: its entries are computed from its source boards; write to those instead", id)
}
