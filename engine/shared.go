package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// Shared mode: several podium nodes on one podium.SharedStore (PostgreSQL).
//
// The database is the distributed engine; there is no lease and no
// forwarding. A node's writer takes a group of requests, opens a write
// transaction that locks the head rows of the group's boards (in id order,
// so writers never deadlock), brings its indexes up to those heads by
// reading the log the other nodes wrote, computes the group against that
// state, and commits the log rows, the entries they produce (written
// through: the entries table always matches the log) and the new heads in
// the same transaction. Two nodes therefore never compute on the same
// state: no update of a sum or best is lost, seqs are never reused, and the
// rank in an answer reflects every submission acknowledged before it,
// whichever node took it. A node that pauses or is cut off while it holds a
// lock simply cannot commit: the database ends its transaction (lock and
// idle timeouts) and the others go on.
//
// Every node follows what the others commit: a follower goroutine reads the
// change feed (boards, players, keys) and the boards' heads, woken early by
// the broker's notices and polling anyway, and hands what it found to the
// writer, which reloads changed objects and replays the log of boards that
// moved. Replay skips a submission an entry already reflects, so reading a
// board's entries while others write and then replaying from the head read
// before them converges on the same state.

// PriorAnswer is the error of a write whose Idempotency-Key another node
// already used with the same body: the caller answers with Record (Status
// 0: that request's writes are committed but its answer is not stored yet;
// wait for it with AwaitIdempotency, or answer from the current state).
type PriorAnswer struct{ Record podium.IdempotencyRecord }

func (p *PriorAnswer) Error() string {
	return "an earlier request with this Idempotency-Key was already processed"
}

// cluster is shared mode: this node's part in a cluster of nodes on one
// podium.SharedStore. It is made only in shared mode (Engine.sh; nil on a
// store of its own) and owns what only shared mode needs: the store's
// shared side, the broker, the follower's position in the change feed,
// what notices said (notices.go) and whether the database answers. It is
// the engine's committer in that mode (loop.go): each group is locked,
// caught up, computed, committed and applied in turn. There is no
// pipeline: the computation must follow the lock, and groups grow while a
// commit waits, which is what keeps throughput up.
//
// It computes with the core's boards, players and keys through e (the
// writer's group, the replay rule, the install and remove of boards):
// those are the core's, and shared mode only decides when they run.
type cluster struct {
	e      *Engine
	store  podium.SharedStore
	broker podium.Broker // nil: poll only
	node   string
	poll   time.Duration

	cursor int64 // the change feed position; follower only (Start before it)
	// seen is the newest change applied; writer only (Start before it).
	seen int64

	// dbErr is the last failure to reach the database (nil once it works
	// again): while it is set, writes fail fast instead of waiting on
	// connection timeouts.
	dbErr atomic.Pointer[error]

	mu      sync.Mutex
	advance map[string]uint64       // boards that notices said advanced
	rows    map[string][]podium.Row // their log rows the notices carried, by seq
	nrows   int                     // rows held, bounded by maxNoticeRows
	changes bool                    // a notice said the change feed moved
	// pollAsked: a caller of awaitRound wants the next round to read
	// every head (Checker.Indexes).
	pollAsked bool
	wake      chan struct{}
	// rounds counts the follower's rounds, begun and ended, and ended is
	// closed (and replaced) at the end of each: awaitRound waits on them.
	begun, done uint64
	ended       chan struct{}

	// probe is the number of the probe notice a start waits for (0: none),
	// probed where its arrival is signalled (follow.go, awaitSubscribed).
	probe  atomic.Uint64
	probed chan struct{}
}

func newCluster(e *Engine, st podium.SharedStore, b podium.Broker, node string, poll time.Duration) *cluster {
	return &cluster{e: e, store: st, broker: b, node: node, poll: poll, advance: map[string]uint64{},
		rows: map[string][]podium.Row{}, wake: make(chan struct{}, 1), probed: make(chan struct{}, 1),
		ended: make(chan struct{})}
}

// open runs first in Start, before anything is loaded: it subscribes to
// the notices (listen) and reads the change feed's position, so that what
// other nodes commit while this node loads is applied after (again, which
// is harmless). The returned cancel (nil: nothing to cancel) ends the
// subscription of a start that failed.
func (sh *cluster) open(ctx context.Context) (cancel func(), err error) {
	cancel = sh.listen(ctx)
	cursor, err := sh.store.LastChange(ctx)
	if err != nil {
		if cancel != nil {
			cancel()
		}
		return nil, fmt.Errorf("read the change feed: %w", err)
	}
	sh.cursor, sh.seen = cursor, cursor
	return cancel, nil
}

func (sh *cluster) load(ctx context.Context) error {
	if err := sh.catchUpAll(ctx); err != nil {
		return fmt.Errorf("catch up with the other nodes: %w", err)
	}
	return nil
}

func (sh *cluster) start() {}

// started starts the follower once the engine serves reads, since the
// writer refuses ops before: the first pass may come at once, for the
// notices heard while loading.
func (sh *cluster) started() { sh.e.bg.Go(sh.follow) }

func (sh *cluster) group(ops []*op) { sh.groupChecked(context.Background(), ops) }

// quiesce has nothing to wait for: every group is applied before the
// writer goes on.
func (sh *cluster) quiesce() {}

// putBoards makes each PUT alone: each locks its boards in the database
// and catches up with them.
func (sh *cluster) putBoards(ops []*op) {
	for _, o := range ops {
		o.err = sh.putBoard(o.putBoard())
	}
}

func (sh *cluster) putBoard(o *putBoardOp) error {
	e, ctx := sh.e, context.Background()
	var cur *podium.Board
	if bs := e.board(o.update.ID); bs != nil {
		cur = bs.def.Load()
	}
	return sh.lockedMeta(ctx, o.update.ID, func(tx podium.WriteTx) error {
		if err := sh.metaCaughtUp(ctx, tx); err != nil {
			return err
		}
		return e.applyPutBoard(o, func(b *podium.Board, parts func() []podium.Part) error {
			if err := tx.PutBoard(ctx, b); err != nil { // sets b.Gen
				return err
			}
			return tx.Commit(ctx, &podium.Batch{Parts: parts()}) // the modules' rows ride the board's commit
		})
	}, e.hooks.putLocks(o.update, cur)...)
}

func (sh *cluster) deleteBoard(id string) error {
	e, ctx := sh.e, context.Background()
	return sh.lockedMeta(ctx, id, func(tx podium.WriteTx) error {
		if err := sh.metaCaughtUp(ctx, tx); err != nil {
			return err
		}
		return e.applyDeleteBoard(id, func(id string, parts []podium.Part) error {
			if err := tx.DeleteBoard(ctx, id); err != nil {
				return err
			}
			return tx.Commit(ctx, &podium.Batch{Parts: parts})
		})
	})
}

// tick stores the answers of Idempotency-Key requests no commit carried
// and forgets expired ones.
func (sh *cluster) tick() {
	sh.e.flushIdempotency()
	sh.e.idem.prune()
}

// drained sends the answers of Idempotency-Key requests to the database at
// once, so that a retry on another node gets them byte for byte.
func (sh *cluster) drained() {
	if sh.e.idem.hasPending() {
		sh.e.flushIdempotency()
	}
}

func (sh *cluster) stop() { sh.e.flushIdempotency() }

// lockedMeta runs a board change inside a write transaction that holds the
// board's lock, after catching up with it, so that the check against the
// board's entries sees every entry any node wrote.
// The boards in more (an aggregate's sources) are locked and caught up
// with too.
func (sh *cluster) lockedMeta(ctx context.Context, board string, fn func(tx podium.WriteTx) error, more ...string) error {
	if err := sh.DBError(); err != nil {
		return errDatabaseDown()
	}
	ids := append([]string{board}, more...)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	tx, err := sh.store.Begin(ctx, ids)
	if err != nil {
		return sh.beginFailed(err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		if err := sh.syncLocked(ctx, tx, id); err != nil {
			return sh.e.health.storeFailed("catch up", err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	sh.publishChange()
	return nil
}

// groupChecked runs one group of score and delete ops: lock, catch up,
// compute, commit, apply, answer.
// check, if given, runs once the locks are held and caught up with, before
// the group is computed; its error fails the group (Exclusive.Submit,
// hooks_review.go).
func (sh *cluster) groupChecked(ctx context.Context, ops []*op, check ...func() error) {
	e := sh.e
	fail := func(err error) {
		for _, o := range ops {
			if o.err == nil {
				o.err = err
			}
			o.results = nil
			close(o.done)
		}
	}
	if sh.DBError() != nil {
		fail(errDatabaseDown())
		return
	}
	tx, ids, err := sh.begin(ctx, groupBoards(ops)) // begin.go
	if err != nil {
		fail(sh.beginFailed(err))
		return
	}
	defer tx.Rollback()
	for _, id := range ids {
		if err := sh.syncLocked(ctx, tx, id); err != nil {
			e.log.Error("catch up with the log failed", "board", id, "err", err)
			fail(podium.Errorf(podium.ECodeUnavailable, "could not read what other nodes wrote; nothing was applied, retry shortly"))
			return
		}
	}
	for _, id := range ids {
		if err := e.hooks.catchUp(ctx, id); err != nil { // hooks_tourney.go: tournament joins
			e.log.Error("catch up with the joins failed", "board", id, "err", err)
			fail(podium.Errorf(podium.ECodeUnavailable, "could not read what other nodes wrote; nothing was applied, retry shortly"))
			return
		}
	}
	if err := sh.checkClaims(ctx, tx, ops); err != nil {
		fail(podium.Errorf(podium.ECodeUnavailable, "could not check the Idempotency-Key; nothing was applied, retry shortly"))
		return
	}
	for _, c := range check {
		if err := c(); err != nil {
			fail(err)
			return
		}
	}
	g := e.buildGroup(ops)
	sh.writeThrough(g)
	if g.batch.Len() > 0 {
		g.err = tx.Commit(ctx, &g.batch)
	}
	if g.err != nil {
		unknown := errors.Is(g.err, podium.ErrOutcomeUnknown)
		if unknown {
			// The next group or the follower reads the board's head and
			// replays whatever of this group was stored: memory follows
			// the database, so writes go on.
			e.log.Error("group commit outcome unknown; the log decides", "err", g.err)
		} else {
			e.log.Error("group commit failed; nothing of it was stored", "err", g.err)
		}
		e.health.commitFailed(g.err, unknown)
		e.hooks.forget() // hooks.go: module state may include what failed
	} else {
		sh.dbWorked()
		e.health.commitWorked()
	}
	e.pl.finishGroup(g)
	if g.err == nil {
		sh.publishRows(g)
	}
}

// lockStep begins the transaction of one run of Steps (steps.go): its
// boards, widened by the Lockers, locked and caught up with, as a group's.
func (sh *cluster) lockStep(ctx context.Context, boards []string) (podium.WriteTx, error) {
	if sh.DBError() != nil {
		return nil, errDatabaseDown()
	}
	tx, ids, err := sh.begin(ctx, boards)
	if err != nil {
		return nil, sh.beginFailed(err)
	}
	for _, b := range ids {
		if err := sh.syncLocked(ctx, tx, b); err != nil {
			tx.Rollback()
			return nil, sh.e.health.storeFailed("catch up", err)
		}
	}
	for _, b := range ids {
		// What a module keeps of the boards (group memberships), as a
		// group's begin does: a step computes from it too.
		if err := sh.e.hooks.catchUp(ctx, b); err != nil {
			tx.Rollback()
			return nil, sh.e.health.storeFailed("catch up", err)
		}
	}
	return tx, nil
}

// commitStep commits one run of Steps in the transaction lockStep began,
// and applies it.
func (sh *cluster) commitStep(ctx context.Context, tx podium.WriteTx, g *Group) {
	sh.writeThrough(g)
	if g.err = tx.Commit(ctx, &g.batch); g.err != nil {
		sh.e.health.commitFailed(g.err, false)
	}
	sh.e.pl.finishGroup(g)
	if g.err == nil {
		sh.publishRows(g)
	}
}

// beginFailed is the answer to a write whose transaction could not begin.
// A domain error is the store's own answer (a board another node held past
// the lock timeout): the database works, and only this write fails. Any
// other error means the database cannot be reached, and writes fail fast
// until it answers again.
func (sh *cluster) beginFailed(err error) error {
	if podium.ErrorCode(err) != podium.ECodeInternal {
		return err
	}
	sh.dbFailed(err)
	sh.e.log.Warn("database: begin failed", "err", err)
	return errDatabaseDown()
}

// groupBoards lists the valid board ids the ops of a group write, sorted.
func groupBoards(ops []*op) []string {
	var ids []string
	for _, o := range ops {
		switch o.kind {
		case opDeleteEntry:
			ids = append(ids, o.deleteEntry().ref.Board)
			continue
		case opModule: // hooks_tourney.go
			ids = append(ids, o.work().w.Boards...)
			continue
		case opRestore:
			ids = append(ids, o.restore().board)
			continue
		}
		for i := range o.scores {
			ids = append(ids, o.scores[i].Board)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	return slices.DeleteFunc(ids, func(id string) bool { return !podium.ValidBoardID(id) })
}

// checkClaims finds the Idempotency-Key requests of a group whose key is
// already stored (another node processed it): they are answered with the
// stored record, or with a conflict when the body differs.
func (sh *cluster) checkClaims(ctx context.Context, tx podium.WriteTx, ops []*op) error {
	var refs []podium.IdempotencyRef
	for _, o := range ops {
		if o.claim != nil {
			r := &o.claim.rec
			refs = append(refs, podium.IdempotencyRef{Scope: r.Scope, Key: r.Key})
		}
	}
	if len(refs) == 0 {
		return nil
	}
	recs, err := tx.Idempotency(ctx, refs)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		for _, o := range ops {
			if o.claim == nil || o.claim.rec.Scope != rec.Scope || o.claim.rec.Key != rec.Key {
				continue
			}
			if bytes.Equal(o.claim.rec.RequestHash, rec.RequestHash) {
				o.err = &PriorAnswer{Record: rec}
			} else {
				o.err = podium.Errorf(podium.ECodeConflict, "Idempotency-Key %q was already used with a different request body", rec.Key)
			}
		}
	}
	return nil
}

// writeThrough adds to a group's batch the entries it produces and the
// boards' new heads as their watermarks.
func (sh *cluster) writeThrough(g *Group) {
	for k, v := range g.overlay {
		def := k.bs.def.Load()
		player := sh.e.players.name(k.player).Player
		if !v.exists {
			g.batch.Deletes = append(g.batch.Deletes, podium.EntryRef{Board: def.ID, Period: k.period, Player: player})
			continue
		}
		g.batch.Upserts = append(g.batch.Upserts, podium.Entry{Board: def.ID, Period: k.period, Player: player,
			Keys: append([]int64(nil), v.entry.Keys[:len(def.Keys)]...), At: podium.FromMillis(v.entry.At),
			Seq: v.entry.Seq, Meta: v.meta, Results: v.results})
	}
	for bs, seq := range g.seqs {
		g.batch.Watermarks = append(g.batch.Watermarks, podium.Watermark{Board: bs.def.Load().ID, Seq: seq})
	}
}

// AwaitIdempotency waits up to wait for the stored answer of a request
// that another node committed (a PriorAnswer with Status 0) and returns
// it; Status stays 0 if it did not come in time. On a store of its own
// there is no other node to wait for: rec is returned as it is.
func (e *Engine) AwaitIdempotency(ctx context.Context, rec podium.IdempotencyRecord, wait time.Duration) podium.IdempotencyRecord {
	if e.sh == nil || rec.Status != 0 {
		return rec
	}
	return e.sh.awaitIdempotency(ctx, rec, wait)
}

// awaitIdempotency polls the database for the answer AwaitIdempotency
// waits for.
func (sh *cluster) awaitIdempotency(ctx context.Context, rec podium.IdempotencyRecord, wait time.Duration) podium.IdempotencyRecord {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return rec
		case <-time.After(25 * time.Millisecond):
		}
		tx, err := sh.store.Begin(ctx, nil)
		if err != nil {
			return rec
		}
		recs, err := tx.Idempotency(ctx, []podium.IdempotencyRef{{Scope: rec.Scope, Key: rec.Key}})
		tx.Rollback()
		if err == nil && len(recs) == 1 && recs[0].Status != 0 {
			return recs[0]
		}
	}
	return rec
}
