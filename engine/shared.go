package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
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

// sharedCommitter is the committer in shared mode (loop.go): each group is
// locked, caught up, computed, committed and applied in turn. There is no
// pipeline: the computation must follow the lock, and groups grow while a
// commit waits, which is what keeps throughput up.
type sharedCommitter struct{ e *Engine }

func (c sharedCommitter) load(ctx context.Context) error {
	if err := c.e.catchUpAll(ctx); err != nil {
		return fmt.Errorf("catch up with the other nodes: %w", err)
	}
	return nil
}

func (c sharedCommitter) start() {}

// started starts the follower once the engine serves reads, since the
// writer refuses ops before: the first pass may come at once, for the
// notices heard while loading.
func (c sharedCommitter) started() { c.e.bg.Go(c.e.follow) }

func (c sharedCommitter) group(ops []*op) { c.e.sharedGroup(context.Background(), ops) }

// quiesce has nothing to wait for: every group is applied before the
// writer goes on.
func (c sharedCommitter) quiesce() {}

func (c sharedCommitter) putBoard(o *putBoardOp) error {
	e, ctx := c.e, context.Background()
	var cur *podium.Board
	if bs := e.board(o.update.ID); bs != nil {
		cur = bs.def.Load()
	}
	return e.lockedMeta(ctx, o.update.ID, func(tx podium.WriteTx) error {
		if err := e.metaCaughtUp(ctx, tx); err != nil {
			return err
		}
		return e.applyPutBoard(o, func(b *podium.Board) error {
			if err := tx.PutBoard(ctx, b); err != nil {
				return err
			}
			return tx.Commit(ctx, &podium.Batch{})
		})
	}, e.hooks.putLocks(o.update, cur)...)
}

func (c sharedCommitter) deleteBoard(id string) error {
	e, ctx := c.e, context.Background()
	return e.lockedMeta(ctx, id, func(tx podium.WriteTx) error {
		if err := e.metaCaughtUp(ctx, tx); err != nil {
			return err
		}
		return e.applyDeleteBoard(id, func(id string) error {
			if err := tx.DeleteBoard(ctx, id); err != nil {
				return err
			}
			return tx.Commit(ctx, &podium.Batch{})
		})
	})
}

// tick stores the answers of Idempotency-Key requests no commit carried
// and forgets expired ones.
func (c sharedCommitter) tick() {
	c.e.flushIdempotency()
	c.e.pruneIdempotency()
}

// drained sends the answers of Idempotency-Key requests to the database at
// once, so that a retry on another node gets them byte for byte.
func (c sharedCommitter) drained() {
	if c.e.idem.hasPending() {
		c.e.flushIdempotency()
	}
}

func (c sharedCommitter) stop() { c.e.flushIdempotency() }

// lockedMeta runs a board change inside a write transaction that holds the
// board's lock, after catching up with it, so that the check against the
// board's entries sees every entry any node wrote.
// The boards in more (an aggregate's sources) are locked and caught up
// with too.
func (e *Engine) lockedMeta(ctx context.Context, board string, fn func(tx podium.WriteTx) error, more ...string) error {
	if err := e.sh.DBError(); err != nil {
		return errDatabaseDown()
	}
	ids := append([]string{board}, more...)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	tx, err := e.sh.store.Begin(ctx, ids)
	if err != nil {
		return e.beginFailed(err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		if err := e.syncLocked(ctx, tx, id); err != nil {
			return e.storeFailed("catch up", err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	e.publishChange()
	return nil
}

// sharedGroup runs one group of score and delete ops: lock, catch up,
// compute, commit, apply, answer.
// check, if given, runs once the locks are held and caught up with, before
// the group is computed; its error fails the group (Exclusive.Submit,
// hooks_review.go).
func (e *Engine) sharedGroup(ctx context.Context, ops []*op, check ...func() error) {
	fail := func(err error) {
		for _, o := range ops {
			if o.err == nil {
				o.err = err
			}
			o.results = nil
			close(o.done)
		}
	}
	if e.sh.DBError() != nil {
		fail(errDatabaseDown())
		return
	}
	tx, ids, err := e.begin(ctx, groupBoards(ops)) // begin.go
	if err != nil {
		fail(e.beginFailed(err))
		return
	}
	defer tx.Rollback()
	for _, id := range ids {
		if err := e.syncLocked(ctx, tx, id); err != nil {
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
	if err := e.checkClaims(ctx, tx, ops); err != nil {
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
	e.writeThrough(g)
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
		e.commitFailed(g.err, unknown)
		e.hooks.forget() // hooks.go: module state may include what failed
	} else {
		e.sh.dbWorked()
		e.commitWorked()
	}
	e.finishGroup(g)
	if g.err == nil {
		e.publishRows(g)
	}
}

// beginFailed is the answer to a write whose transaction could not begin.
// A domain error is the store's own answer (a board another node held past
// the lock timeout): the database works, and only this write fails. Any
// other error means the database cannot be reached, and writes fail fast
// until it answers again.
func (e *Engine) beginFailed(err error) error {
	if podium.ErrorCode(err) != podium.ECodeInternal {
		return err
	}
	e.sh.dbFailed(err)
	e.log.Warn("database: begin failed", "err", err)
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
func (e *Engine) checkClaims(ctx context.Context, tx podium.WriteTx, ops []*op) error {
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
func (e *Engine) writeThrough(g *Group) {
	for k, v := range g.overlay {
		def := k.bs.def.Load()
		player := e.players.name(k.player).Player
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
// it; Status stays 0 if it did not come in time.
func (e *Engine) AwaitIdempotency(ctx context.Context, rec podium.IdempotencyRecord, wait time.Duration) podium.IdempotencyRecord {
	if e.sh == nil || rec.Status != 0 {
		return rec
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return rec
		case <-time.After(25 * time.Millisecond):
		}
		tx, err := e.sh.store.Begin(ctx, nil)
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
