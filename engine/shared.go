package engine

import (
	"bytes"
	"context"
	"encoding/json"
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

// sharedState is the engine's part of shared mode.
type sharedState struct {
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
	wake    chan struct{}

	// probe is the number of the probe notice a start waits for (0: none),
	// probed where its arrival is signalled (follow.go, awaitSubscribed).
	probe  atomic.Uint64
	probed chan struct{}

	// revoke ends the credentials a notice names as revoked (the engine's
	// revokeNow), on the broker's goroutine: not behind the writer.
	revoke func(ids []string)
}

// maxNoticeRows bounds the rows a node keeps from notices between two
// rounds of its follower; past it, rows are dropped and the log is read.
const maxNoticeRows = 20000

func newSharedState(st podium.SharedStore, b podium.Broker, node string, poll time.Duration) *sharedState {
	return &sharedState{store: st, broker: b, node: node, poll: poll, advance: map[string]uint64{},
		rows: map[string][]podium.Row{}, wake: make(chan struct{}, 1), probed: make(chan struct{}, 1)}
}

// notice records a notice from the broker and wakes the follower.
func (sh *sharedState) notice(n podium.Notice) {
	if n.Node == sh.node && n.Board == "" && n.Contest == "" && n.Seq != 0 && n.Seq == sh.probe.Load() {
		select { // this node's start probing its subscription
		case sh.probed <- struct{}{}:
		default:
		}
		return
	}
	if n.Node == sh.node || n.Contest != "" { // contest notices are package ctf's
		return
	}
	if len(n.Revoked) > 0 && sh.revoke != nil {
		sh.revoke(n.Revoked)
	}
	sh.mu.Lock()
	if n.Board != "" && n.Seq > sh.advance[n.Board] {
		sh.advance[n.Board] = n.Seq
	}
	if n.Board != "" && len(n.Rows) > 0 && sh.nrows+len(n.Rows) <= maxNoticeRows {
		sh.rows[n.Board] = append(sh.rows[n.Board], n.Rows...)
		sh.nrows += len(n.Rows)
	}
	if n.Change != 0 {
		sh.changes = true
	}
	sh.mu.Unlock()
	sh.poke()
}

func (sh *sharedState) poke() {
	select {
	case sh.wake <- struct{}{}:
	default:
	}
}

func (sh *sharedState) take() (map[string]uint64, map[string][]podium.Row, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	adv, rows, ch := sh.advance, sh.rows, sh.changes
	sh.advance, sh.rows, sh.nrows, sh.changes = map[string]uint64{}, map[string][]podium.Row{}, 0, false
	return adv, rows, ch
}

// dbFailed and dbWorked track whether the database answers.
func (sh *sharedState) dbFailed(err error) { sh.dbErr.Store(&err) }

func (sh *sharedState) dbWorked() { sh.dbErr.Store(nil) }

// DBError is the last failure to reach the database while it lasts.
func (sh *sharedState) DBError() error {
	if p := sh.dbErr.Load(); p != nil {
		return *p
	}
	return nil
}

// errDatabaseDown answers writes while the database cannot be reached.
func errDatabaseDown() error {
	return podium.Errorf(podium.ECodeUnavailable, "the database is unreachable; nothing was applied. Reads are served from memory and may be stale; retry shortly")
}

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
	}, e.putLocks(o.update, cur)...)
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

func (c sharedCommitter) decide(o *op) { c.e.sharedDecide(context.Background(), o) }

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
// the group is computed; its error fails the group (review.go).
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
		if err := e.catchUpModules(ctx, id); err != nil { // hooks_tourney.go: tournament joins
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
		e.forget() // hooks.go: module state may include what failed
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
		case opSettle: // settle.go: the tournament and its points boards
			ids = append(ids, o.settle().boards...)
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

// syncLocked brings one board, locked by tx, up to the database: it drops
// a board that was deleted, loads one made (or made again) elsewhere, and
// replays the log up to the head.
func (e *Engine) syncLocked(ctx context.Context, tx podium.WriteTx, id string) error {
	head, gen, ok := tx.Head(id)
	bs := e.board(id)
	if !ok {
		if bs != nil {
			e.removeBoard(id)
		}
		return nil
	}
	if bs == nil || bs.def.Load().Gen != gen {
		def, err := e.sh.store.LoadBoard(ctx, id)
		if err != nil || def == nil {
			return fmt.Errorf("load board %s: %w", id, err)
		}
		if bs, err = e.reloadBoard(ctx, def); err != nil {
			return err
		}
	}
	if head > bs.seq {
		return e.catchUp(ctx, bs, tx.Log)
	}
	return nil
}

// logReader reads a board's log after a seq: the store's, or a write
// transaction's.
type logReader func(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error

// catchUp replays the log of a board after its seq: what other nodes
// committed. It runs on the writer (or in Start, before it).
func (e *Engine) catchUp(ctx context.Context, bs *BoardState, read logReader) error {
	def := bs.def.Load()
	touched := map[string][]uint32{}
	err := read(ctx, def.ID, bs.seq, func(s *podium.Submission) error {
		if s.Seq <= bs.seq {
			return nil
		}
		sub := *s
		sub.Keys = append([]int64(nil), s.Keys...)
		sub.Meta = nil
		if hasMeta(s.Meta) {
			sub.Meta = append(json.RawMessage(nil), s.Meta...)
		}
		// A period in the store but not in memory is read now, rows
		// included; the read count keeps it until the lock does.
		loaded, err := e.loadLazy(ctx, bs, sub.Period)
		if err != nil {
			return err
		}
		pid := e.players.intern(sub.Player)
		bs.mu.Lock()
		if loaded != nil {
			loaded.readers.Add(-1)
		}
		ps := bs.periods[sub.Period]
		if ps == nil {
			ps = newPeriodState(bs.desc)
			bs.periods[sub.Period] = ps
		}
		changed, err := e.replayInto(def, ps, pid, &sub)
		bs.seq = sub.Seq
		bs.mu.Unlock()
		if err != nil {
			return fmt.Errorf("replay seq %d: %w", sub.Seq, err)
		}
		e.replayed(bs, def, &sub) // hooks.go
		if changed {
			touched[sub.Period] = append(touched[sub.Period], pid)
		}
		return nil
	})
	if len(touched) > 0 {
		bs.mu.Lock()
		for period := range touched {
			if ps := bs.periods[period]; ps != nil {
				e.old.resizeLocked(ps) // an old period grew or shrank
			}
		}
		bs.mu.Unlock()
	}
	// Also when nothing changed: a period read above for a row it already
	// held (the store had the row) was kept past the budget while its
	// read count held it, and only a shrink now lets it go.
	e.shrink()
	if e.listener != nil {
		for period, players := range touched {
			e.listener.Applied(def.ID, period, bs.seq, players)
		}
	}
	return err
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

// publish sends a notice to the other nodes, if there is a broker.
func (e *Engine) publish(n podium.Notice) {
	if e.sh == nil || e.sh.broker == nil {
		return
	}
	n.Node = e.sh.node
	if err := e.sh.broker.Publish(context.Background(), n); err != nil {
		e.log.Debug("broker: publish", "err", err)
	}
}

// maxRowsPerNotice caps the rows a notice carries: a larger group is
// announced by its seq alone, and the others read it from the log.
const maxRowsPerNotice = 128

// publishRows announces a committed group: per board its new seq and,
// unless the group is large, the log rows themselves, so that the other
// nodes need not read them back from the database.
func (e *Engine) publishRows(g *Group) {
	if e.sh == nil || e.sh.broker == nil {
		return
	}
	for bs, seq := range g.seqs {
		id := bs.def.Load().ID
		n := podium.Notice{Board: id, Seq: seq}
		var rows []podium.Row
		for i := range g.batch.Submissions {
			if sub := &g.batch.Submissions[i]; sub.Board == id {
				if len(rows) == maxRowsPerNotice {
					rows = nil
					break
				}
				rows = append(rows, podium.RowOf(sub))
			}
		}
		n.Rows = rows
		e.publish(n)
	}
}

// publishChange tells the other nodes that the change feed moved.
func (e *Engine) publishChange() { e.publish(podium.Notice{Change: 1}) }

// changed is called after a local metadata change (a player, a key);
// revoked names the keys or sessions it deleted, which the other nodes
// then refuse on receipt of the notice (revokeNow), without waiting for
// their follower, which may be behind the writer's queue.
func (e *Engine) changed(revoked ...string) {
	if e.sh == nil {
		return
	}
	if len(revoked) > podium.MaxRevokedPerNotice {
		revoked = nil // the change feed carries them
	}
	e.publish(podium.Notice{Change: 1, Revoked: revoked})
}

// revokeNow ends at once, on this node, the credentials of keys or
// sessions another node deleted (a notice's Revoked): they are forgotten
// and their streams end. The change feed, applied later by the follower,
// agrees: it removes them too.
func (e *Engine) revokeNow(ids []string) {
	for _, id := range ids {
		e.keys.remove(id)
		e.life.revoked(id) // module.go: sessions
		if e.listener != nil {
			e.listener.KeyRevoked(id)
		}
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
