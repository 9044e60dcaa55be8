package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"time"

	"github.com/podiumhq/podium"
)

// The follower: every node learns what the others committed (see the
// comment at the top of shared.go) and applies it on its writer.

// listen subscribes to the broker's notices (none without a broker: nil)
// until the engine stops, or until the returned cancel is called (a start
// that failed; it waits for the subscription to end), and waits until the
// subscription delivers. Start calls it
// before it loads anything: a notice of a commit made while the node
// loads, after it read that board's head, is then kept and wakes the
// follower at once (TestSharedStartFollowsWritesMadeWhileLoading), where
// a subscription made after the load lost it, and the write arrived only
// with the next poll.
func (sh *cluster) listen(ctx context.Context) (cancel func()) {
	e := sh.e
	b := sh.broker
	if b == nil {
		return nil
	}
	bctx, cancel := context.WithCancel(e.stopCtx)
	ended := make(chan struct{})
	e.bg.Go(func() {
		defer close(ended)
		if err := b.Subscribe(bctx, sh.notice); err != nil && bctx.Err() == nil {
			e.log.Warn("broker: subscribe ended", "err", err)
		}
	})
	sh.awaitSubscribed(ctx)
	return func() { cancel(); <-ended }
}

// probeWait bounds how long a start waits for its subscription: a broker
// that is down costs a start this much, and the node then polls.
const probeWait = 2 * time.Second

// awaitSubscribed publishes a probe, a notice naming only this node and a
// random number, until the subscription delivers it back (a notice sent
// before the subscription listens is lost), or for at most probeWait.
// Other nodes ignore probes.
func (sh *cluster) awaitSubscribed(ctx context.Context) {
	e := sh.e
	nonce := mrand.Uint64() | 1
	sh.probe.Store(nonce)
	defer sh.probe.Store(0)
	deadline := time.NewTimer(probeWait)
	defer deadline.Stop()
	again := time.NewTicker(20 * time.Millisecond)
	defer again.Stop()
	for {
		sh.publish(podium.Notice{Seq: nonce})
		select {
		case <-sh.probed:
			return
		case <-again.C:
		case <-deadline.C:
			e.log.Warn("broker: the subscription delivered nothing yet; starting anyway, changes from other nodes arrive by polling until it does", "waited", probeWait)
			return
		case <-ctx.Done():
			return
		}
	}
}

// follow is the follower goroutine: it learns what other nodes changed,
// from notices and by polling, and hands it to the writer.
func (sh *cluster) follow() {
	e := sh.e
	ctx := e.stopCtx
	t := time.NewTicker(sh.poll)
	defer t.Stop()
	var lastLog time.Time
	for {
		poll := false
		select {
		case <-e.stop:
			return
		case <-sh.wake:
		case <-t.C:
			poll = true
		}
		n, asked := sh.beginRound()
		stop := sh.round(ctx, poll || asked, &lastLog)
		sh.endRound(n)
		if stop {
			return
		}
	}
}

// round is one round of the follower: find what is new and apply it. It
// reports whether the follower must stop.
func (sh *cluster) round(ctx context.Context, poll bool, lastLog *time.Time) (stop bool) {
	e := sh.e
	o, err := sh.findNews(ctx, poll)
	if err != nil {
		if ctx.Err() != nil {
			return true
		}
		sh.dbFailed(err)
		if time.Since(*lastLog) > 10*time.Second {
			e.log.Warn("database: cannot follow the other nodes; serving reads from memory", "err", err)
			*lastLog = time.Now()
		}
		return false
	}
	sh.dbWorked()
	if o == nil {
		return false
	}
	if err := e.send(ctx, o); err != nil {
		if podium.ErrorCode(err) == podium.ECodeUnavailable && e.health.closing.Load() {
			return true
		}
		e.log.Warn("follow: apply", "err", err)
		return false
	}
	sh.moveCursor(o.sync())
	if o.sync().more {
		// The next round reads the rest of the feed: woken alone, it read
		// nothing unless a notice had said the feed moved, and the rest
		// waited for the next poll (TestSharedFollowerReadsTheFeedThrough).
		sh.mu.Lock()
		sh.changes = true
		sh.mu.Unlock()
		sh.poke()
	}
	return false
}

// beginRound and endRound number the follower's rounds for awaitRound;
// beginRound also reports whether a caller asked the round to poll.
func (sh *cluster) beginRound() (uint64, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.begun++
	poll := sh.pollAsked
	sh.pollAsked = false
	return sh.begun, poll
}

func (sh *cluster) endRound(n uint64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.done = n
	close(sh.ended)
	sh.ended = make(chan struct{})
}

// awaitRound asks the follower for a round that reads the change feed and
// waits until one that began after the call has ended (or ctx ends): what
// another node committed before the call is then applied here, if the
// database answered. A board made on another node an instant ago is then
// known (lookup). With poll the round also reads every board's head, so
// a write made elsewhere before the call is applied too, notice or not
// (Checker.Indexes).
func (sh *cluster) awaitRound(ctx context.Context, poll bool) error {
	sh.mu.Lock()
	sh.changes = true
	sh.pollAsked = sh.pollAsked || poll
	want, ended := sh.begun+1, sh.ended
	sh.mu.Unlock()
	sh.poke()
	for {
		select {
		case <-ended:
		case <-ctx.Done():
			return ctx.Err()
		case <-sh.e.stop: // the follower ends with the engine: no round will
			return errClosing
		}
		sh.mu.Lock()
		done := sh.done >= want
		ended = sh.ended
		sh.mu.Unlock()
		if done {
			return nil
		}
	}
}

// findNews reads the heads that moved (all of them when poll is set) and
// then the change feed, and returns the op that applies them, nil if
// nothing is new.
//
// The change feed is read after the heads and the notices' rows were
// taken, in every round that applies a row: a player, board or key that
// another node changed before it wrote a row committed before that row,
// so it is in the feed by then, and the writer applies it first
// (applySync; the row replay stops at the head read here). Read before
// the heads, or not at all in a round woken by rows alone, a rename and
// a score for the player showed the score first and the name a round
// later (follow_shared_test.go). When the feed has a full page, the rest
// may hold changes committed before the heads: the heads and rows are
// put back for the next round, which begins at once (more).
func (sh *cluster) findNews(ctx context.Context, poll bool) (*op, error) {
	e := sh.e
	adv, rows, changed := sh.take()
	so := &syncOp{heads: map[string]uint64{}}
	o := &op{kind: opSync, p: so}
	if poll {
		heads, err := sh.store.Heads(ctx)
		if err != nil {
			sh.putBack(adv, rows)
			return nil, err
		}
		for b, s := range heads {
			if s > adv[b] {
				adv[b] = s
			}
		}
	}
	for b, s := range adv {
		if bs := e.board(b); bs == nil || s > bs.AppliedSeq() {
			so.heads[b] = s
			if r := rows[b]; len(r) > 0 {
				if so.rows == nil {
					so.rows = map[string][]podium.Row{}
				}
				so.rows[b] = r
			}
		}
	}
	if changed || poll || len(so.heads) > 0 {
		const page = 1000
		cs, err := sh.store.Changes(ctx, sh.cursor, page)
		switch {
		case errors.Is(err, podium.ErrChangesPruned):
			// The reload (resync) reads the feed's position after this.
			e.log.Warn("this node missed metadata changes that were pruned from the change feed; reloading every board, player and key", "position", sh.cursor)
			so.resync = true
		case err != nil:
			sh.putBack(so.heads, so.rows)
			return nil, err
		}
		so.changes, so.more = cs, len(cs) == page
		if so.more && len(so.heads) > 0 {
			sh.putBack(so.heads, so.rows)
			so.heads, so.rows = map[string]uint64{}, nil
		}
	}
	if !so.resync && len(so.changes) == 0 && len(so.heads) == 0 {
		return nil, nil
	}
	return o, nil
}

// moveCursor moves the change feed position past what a sync op applied.
func (sh *cluster) moveCursor(o *syncOp) {
	if o.resync {
		sh.cursor = o.cursor
	} else if n := len(o.changes); n > 0 {
		sh.cursor = o.changes[n-1].ID
	}
}

// applySync applies what the follower found, on the writer: changed
// objects first (a board made elsewhere must exist before its log is
// replayed), then the log of every board that moved.
func (sh *cluster) applySync(ctx context.Context, o *syncOp) error {
	e := sh.e
	if o.resync {
		cursor, err := sh.resync(ctx)
		if err != nil {
			return fmt.Errorf("reload after the change feed was pruned: %w", err)
		}
		o.cursor = cursor
		sh.seen = max(sh.seen, cursor)
	}
	for _, c := range o.changes {
		if err := sh.refresh(ctx, c); err != nil {
			return fmt.Errorf("refresh %s %s: %w", c.Kind, c.Key, err)
		}
		sh.seen = max(sh.seen, c.ID)
	}
	for id, head := range o.heads {
		bs := e.board(id)
		if bs == nil {
			continue // not made yet as far as the change feed says; a later sync loads it
		}
		read := logReader(e.store.Log)
		if rows := o.rows[id]; len(rows) > 0 {
			read = rowsThenLog(rows, head, e.store.Log)
		}
		// Not past the head: a row committed after the change feed was
		// read may follow a change this op does not carry.
		if err := sh.catchUp(ctx, bs, upTo(head, read)); err != nil {
			return fmt.Errorf("board %s: %w", id, err)
		}
	}
	return nil
}

// refresh reloads the object a change names and applies it.
func (sh *cluster) refresh(ctx context.Context, c podium.Change) error {
	e := sh.e
	st := sh.store
	switch c.Kind {
	case podium.ChangeBoard:
		def, err := st.LoadBoard(ctx, c.Key)
		if err != nil {
			return err
		}
		return sh.refreshBoard(ctx, c.Key, def)
	case podium.ChangePlayer:
		if err := e.life.follow(ctx, c); err != nil { // module.go: review's freezes, before the player
			return err
		}
		p, err := st.LoadPlayer(ctx, c.Key)
		if err != nil || p == nil {
			return err
		}
		e.installPlayer(p)
	case podium.ChangeKey:
		k, err := st.LoadKey(ctx, c.Key)
		if err != nil {
			return err
		}
		if k == nil {
			e.keys.revoke(c.Key)
		} else {
			e.keys.put(k)
		}
	default:
		return e.life.follow(ctx, c) // a module's (module.go): sessions
	}
	return nil
}

// refreshBoard applies a board as loaded from the store (nil: deleted).
func (sh *cluster) refreshBoard(ctx context.Context, id string, def *podium.Board) error {
	e := sh.e
	bs := e.board(id)
	switch {
	case def == nil:
		if bs != nil {
			e.removeBoard(id)
		}
	case bs == nil || bs.def.Load().Gen != def.Gen:
		_, err := sh.reloadBoard(ctx, def)
		return err
	default:
		e.installBoard(def) // which tells the listener
	}
	return nil
}

// catchUpAll brings every board and object up to the database before the
// engine starts serving: a restarted node is ready only once it caught up.
func (sh *cluster) catchUpAll(ctx context.Context) error {
	for {
		o, err := sh.findNews(ctx, true)
		if err != nil {
			return err
		}
		if o == nil {
			return nil
		}
		if err := sh.applySync(ctx, o.sync()); err != nil {
			return err
		}
		sh.moveCursor(o.sync())
		// Done once the feed is read through: the heads were caught up
		// with in the same pass. (Waiting until a pass finds no head that
		// moved never ended while other nodes kept writing; the follower
		// takes over from here.)
		if !o.sync().more {
			return nil
		}
	}
}

// resync reloads every board, player and key, for a node that missed
// changes pruned from the feed, and returns the feed position to go on
// from (read first: what changes meanwhile is applied again, harmlessly).
// It runs on the writer.
func (sh *cluster) resync(ctx context.Context) (int64, error) {
	e := sh.e
	st := sh.store
	cursor, err := st.LastChange(ctx)
	if err != nil {
		return 0, err
	}
	boards, err := st.Boards(ctx)
	if err != nil {
		return 0, err
	}
	exists := map[string]bool{}
	for i := range boards {
		def := &boards[i]
		exists[def.ID] = true
		if err := sh.refreshBoard(ctx, def.ID, def); err != nil {
			return 0, err
		}
	}
	for _, bi := range e.Boards(false) {
		if !exists[bi.ID] {
			e.removeBoard(bi.ID)
		}
	}
	players, err := st.Players(ctx)
	if err != nil {
		return 0, err
	}
	for i := range players {
		p := &players[i]
		if old, ok := e.players.get(p.ID); ok && old.Hidden == p.Hidden {
			e.players.put(p) // a name or meta: nothing to re-rank
		} else {
			e.installPlayer(p)
		}
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		return 0, err
	}
	kept := map[string]bool{}
	for i := range keys {
		kept[keys[i].ID] = true
		e.keys.put(&keys[i])
	}
	for _, id := range e.keys.ids() {
		if !kept[id] {
			e.keys.revoke(id) // ends its live streams too
		}
	}
	if err := e.life.resync(ctx); err != nil { // module.go: sessions, review's freezes
		return 0, err
	}
	return cursor, nil
}

// reloadBoard replaces the in-memory state of a board with one loaded from
// the store (a board made, or deleted and made again, on another node).
func (sh *cluster) reloadBoard(ctx context.Context, def *podium.Board) (*BoardState, error) {
	e := sh.e
	// The entries table is written through: no log tail to replay from a
	// watermark. The head read first may trail the entries read after it;
	// catching up from it skips what the entries already reflect.
	fresh, err := e.ld.loadBoard(ctx, def, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	prev := e.boards.put(fresh)
	e.mu.Unlock()
	var was *podium.Board
	if prev != nil {
		e.old.dropBoard(prev) // oldperiods.go
		was = prev.def.Load()
	}
	e.hooks.boardChanged(was, def)
	if e.listener != nil {
		e.listener.Applied(def.ID, "", fresh.seq, nil)
	}
	return fresh, nil
}
