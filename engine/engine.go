// Package engine is podium's application core: the write path (one writer
// goroutine, group commit, read-modify-write without races) and the read
// model (a rank.Index per board and period, loaded from the store at start).
//
// Every write goes through the single writer goroutine, which drains all
// pending requests, computes their effect against the in-memory state,
// commits them to the store in one transaction and only then applies them to
// the indexes and answers. Readers therefore only ever see committed state,
// and a sum or best can never lose an update.
//
// The locks and their order are listed in docs/LOCKS.md.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
)

// Config configures an Engine. The zero value of each field means its
// default.
type Config struct {
	Store  podium.Store // required
	Now    podium.Clock // default time.Now
	Logger *slog.Logger // default slog.Default()
	// MaxBatch caps the submissions in one group commit (default 8192).
	MaxBatch int
	// IdempotencyTTL is how long Idempotency-Key answers are kept
	// (default 48h; the contract promises at least 24h).
	IdempotencyTTL time.Duration
	// IdempotencyBytes bounds the estimated bytes of the Idempotency-Key
	// records kept in memory to decide retries (default
	// DefaultIdempotencyBytes; negative: none is kept). Past it the
	// oldest are evicted, and keys missing from memory are looked up in
	// the store (idempotency.go).
	IdempotencyBytes int64
	// Registerer receives the engine's Prometheus metrics (default none).
	Registerer prometheus.Registerer
	// Listener, if set, hears about every applied change (live streams).
	Listener Listener

	// With a podium.SharedStore (several nodes on one database):
	// Broker wakes this node when another one commits (nil: poll only),
	// Node names this node in its notices (default: random), and
	// PollEvery is how often the node polls the database for what others
	// changed, notices or not (default 1s).
	Broker    podium.Broker
	Node      string
	PollEvery time.Duration

	// Modules are the feature modules registered with the engine, in the
	// order their hooks run: the write path's (hooks.go) and the
	// lifecycle's (module.go).
	Modules []Module

	// OldPeriodsBytes bounds the estimated bytes of the periods older
	// than each board's previous one that stay in memory after a read
	// (default DefaultOldPeriodsBytes; negative: none stays, each read of
	// an old period reads the store; oldperiods.go).
	OldPeriodsBytes int64
}

// Listener hears about changes after they are committed and applied.
// Calls must not block. The events name boards and keys, never anything
// local to this process, so that other nodes can deliver the same ones.
type Listener interface {
	// Applied reports that entries of one board period changed, up to
	// seq. From the writer goroutine. An empty period means that the
	// whole board may look different: its definition changed (visibility,
	// title, keys), it was deleted or made again, or players were renamed.
	Applied(board, period string, seq uint64, players []uint32)
	// KeyRevoked reports that the API key with this id was deleted:
	// whatever it authorised must end now (open live streams).
	KeyRevoked(id string)
}

// Engine serves reads from memory and funnels writes through one writer.
type Engine struct {
	store    podium.Store
	now      podium.Clock
	log      *slog.Logger
	listener Listener
	metrics  *metrics
	idem     *Idempotency
	keys     *Keys // the API keys (keys.go)

	w      writer   // the writer loop and its queue (loop.go)
	pl     pipeline // group commit, overlay and checkpoints (pipeline.go)
	ld     loader   // reads boards and periods from the store (load.go)
	health health   // loaded, closing, storage failures (health.go)

	players *players
	sh      *cluster              // shared mode (shared.go); nil on a store of its own
	reg     prometheus.Registerer // the modules' metrics go here too (module.go)

	mu     sync.RWMutex
	boards boardSet

	// sendMu orders senders against Close: a sender holds it for reading
	// from its check of health.closing until its op is queued, and Close takes
	// it for writing before it stops the writer, so every op queued is
	// one the writer's final drain sees.
	sendMu sync.RWMutex
	stop   chan struct{} // closed by Close: the writer and the background goroutines end
	// stopCtx is cancelled by Close once the writer has stopped: the
	// context of what the background goroutines ask of the store.
	stopCtx    context.Context
	stopCancel context.CancelFunc
	// bg joins the goroutines that run until the engine stops (the
	// tournament scheduler, the old-period sweeper, the follower, the
	// broker subscription, the modules' Host.Go): Close waits for them,
	// so that none of them uses the store once it returns.
	bg sync.WaitGroup

	life lifecycle // the modules by lifecycle interface (module.go)

	old *oldPeriods // old periods under a byte budget (oldperiods.go)

	hooks    hooks       // the registered modules by hook point (hooks.go)
	prepared []Candidate // the writer's buffer for the Preparers (hooks.go)
}

// New returns an engine over cfg.Store. Call Start to load the indexes and
// start the writer.
func New(cfg Config) *Engine {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 8192
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = 48 * time.Hour
	}
	e := &Engine{
		store:    cfg.Store,
		now:      cfg.Now,
		log:      cfg.Logger,
		listener: cfg.Listener,
		players:  newPlayers(),
		boards:   newBoardSet(),
		stop:     make(chan struct{}),
	}
	e.w = newWriter(e, cfg.MaxBatch)
	e.pl = newPipeline(e)
	e.ld = loader{store: cfg.Store, now: cfg.Now, players: e.players, cp: &e.pl.cp}
	e.stopCtx, e.stopCancel = context.WithCancel(context.Background())
	e.hooks = newHooks(cfg.Modules)
	e.old = newOldPeriods(cfg.OldPeriodsBytes, cfg.Now, e)
	e.keys = newKeys(e)
	switch {
	case cfg.IdempotencyBytes == 0:
		cfg.IdempotencyBytes = DefaultIdempotencyBytes
	case cfg.IdempotencyBytes < 0:
		cfg.IdempotencyBytes = 0
	}
	_, shared := cfg.Store.(podium.SharedStore)
	e.idem = newIdempotency(cfg.IdempotencyTTL, cfg.Now, cfg.IdempotencyBytes, cfg.Store, shared, cfg.Logger, e)
	if st, ok := cfg.Store.(podium.SharedStore); ok {
		if cfg.Node == "" {
			cfg.Node = NewSecret()[4:16]
		}
		if cfg.PollEvery <= 0 {
			cfg.PollEvery = time.Second
		}
		e.sh = newCluster(e, st, cfg.Broker, cfg.Node, cfg.PollEvery)
		e.pl.cp.off = true
	}
	e.w.com = localCommitter{e}
	if e.sh != nil {
		e.w.com = e.sh
	}
	e.metrics = newMetrics(e, cfg.Registerer)
	e.health.now, e.health.log, e.health.shared, e.health.metrics = cfg.Now, cfg.Logger, e.sh != nil, e.metrics
	e.reg = cfg.Registerer
	e.provision(cfg.Modules)
	return e
}

// Idempotency returns what decides requests sent with an Idempotency-Key.
func (e *Engine) Idempotency() *Idempotency { return e.idem }

// SetListener sets the listener that hears about applied changes. Call it
// before Start.
func (e *Engine) SetListener(l Listener) { e.listener = l }

// notifyAll tells the listener that every board may look different
// (a player was renamed or hidden).
func (e *Engine) notifyAll() {
	if e.listener == nil {
		return
	}
	for _, bi := range e.Boards(false) {
		e.listener.Applied(bi.ID, "", bi.Seq, nil)
	}
}

// Ready reports whether the engine serves: its indexes are loaded and it
// is not shutting down. Writes may still be refused (see Status).
func (e *Engine) Ready() bool {
	return e.health.serving()
}

// Now returns the engine's clock reading.
func (e *Engine) Now() time.Time { return e.now() }

// Start loads boards, players, idempotency answers and the current and
// previous period of every board from the store, then starts the writer.
// Ready is false until it returns.
func (e *Engine) Start(ctx context.Context) (err error) {
	t0 := time.Now()
	if e.sh != nil {
		// Notices first: what other nodes commit while this one loads, after
		// it read a board's head, then wakes the follower as soon as it
		// starts, instead of waiting for the next poll (follow.go). The
		// feed position comes next: a change made while this node loads is
		// applied again after, which is harmless.
		var cancel func()
		if cancel, err = e.sh.open(ctx); err != nil {
			return err
		}
		if cancel != nil {
			defer func() {
				if err != nil {
					cancel()
				}
			}()
		}
	}
	players, err := e.store.Players(ctx)
	if err != nil {
		return fmt.Errorf("load players: %w", err)
	}
	for i := range players {
		e.players.put(&players[i])
	}
	boards, err := e.store.Boards(ctx)
	if err != nil {
		return fmt.Errorf("load boards: %w", err)
	}
	wms, err := e.store.Watermarks(ctx)
	if err != nil {
		return fmt.Errorf("load watermarks: %w", err)
	}
	var states []*BoardState
	if sl, ok := e.store.(podium.StartLoader); ok {
		if states, err = e.ld.loadBoards(ctx, sl, boards); err != nil {
			return err
		}
	} else {
		for i := range boards {
			bs, err := e.ld.loadBoard(ctx, &boards[i], wms[boards[i].ID])
			if err != nil {
				return err
			}
			states = append(states, bs)
		}
	}
	entries := 0
	for _, bs := range states {
		e.boards.put(bs)
		for _, p := range bs.periods {
			entries += p.idx.Len()
		}
	}
	if err := e.keys.load(ctx); err != nil {
		return fmt.Errorf("load api keys: %w", err)
	}
	if err := e.life.load(ctx); err != nil { // module.go
		return err
	}
	if err := e.idem.load(ctx); err != nil {
		return fmt.Errorf("load idempotency keys: %w", err)
	}
	if err := e.w.com.load(ctx); err != nil {
		return err
	}
	go e.w.run()
	e.log.Info("indexes loaded", "boards", len(boards), "entries", entries, "players", e.players.count(), "shared", e.sh != nil, "took", time.Since(t0).Round(time.Millisecond))
	e.old.sweepOld() // oldperiods.go: periods the log replay loaded
	e.bg.Go(func() { e.old.sweeper(e.stop) })
	e.life.start() // module.go
	e.health.loaded.Store(true)
	e.w.com.started()
	return nil
}

// Close stops accepting writes, lets the writer finish what it holds and
// waits for it and for every other goroutine of the engine: once it
// returns, the engine no longer uses the store. The background goroutines'
// contexts end only after the writer has answered everything it was sent,
// so that a settlement in flight is committed or refused before its
// lease is released.
func (e *Engine) Close() error {
	e.sendMu.Lock()
	already := e.health.closing.Swap(true)
	e.sendMu.Unlock()
	if already {
		return nil
	}
	if e.health.loaded.Load() {
		close(e.stop)
		<-e.w.done
		e.stopCancel()
		e.bg.Wait()
	}
	return nil
}

// hasMeta reports a meta object worth keeping (not absent, null or {}).
func hasMeta(m json.RawMessage) bool { return podium.StoredMeta(m) != nil }

// send hands an op to the writer and waits for its answer. An op's
// idempotency claim is settled here on failure: aborted when nothing was
// applied, or released without an answer when the caller stopped waiting
// (the writer may still commit it).
func (e *Engine) send(ctx context.Context, o *op) error {
	fail := func(err error) error {
		if o.claim != nil {
			o.claim.Abort()
		}
		return err
	}
	if err := e.health.refusal(); err != nil {
		return fail(err)
	}
	if testHookSend != nil {
		testHookSend()
	}
	o.done = make(chan struct{})
	e.sendMu.RLock()
	if e.health.closing.Load() {
		e.sendMu.RUnlock()
		return fail(errClosing)
	}
	select {
	case e.w.ops <- o:
		e.sendMu.RUnlock()
	case <-ctx.Done():
		e.sendMu.RUnlock()
		return fail(ctx.Err())
	}
	select {
	case <-o.done:
		if o.err != nil {
			return fail(o.err)
		}
		return nil
	case <-ctx.Done():
		if o.claim != nil {
			go func() {
				<-o.done
				if o.err != nil {
					o.claim.Abort()
				} else {
					o.claim.release()
				}
			}()
		}
		return ctx.Err()
	}
}

// testHookSend, when set by a test, runs in send between the check that
// writes are taken and the queueing of the op: where Close can interleave.
var testHookSend func()

// board returns the state of a board, or nil.
func (e *Engine) board(id string) *BoardState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.boards.byID[id]
}

// lookupWait bounds how long a lookup waits for the follower's round.
const lookupWait = 2 * time.Second

// lookup is board for a request: in shared mode a board this node does
// not know yet may have been made on another node an instant ago (the
// client was answered there, then came here), so before answering that it
// does not exist the node waits for one round of its follower that began
// after the call, which reads the change feed. Concurrent misses share a
// round; a miss while the database is down, or before the node serves,
// answers from memory at once, as reads do.
func (e *Engine) lookup(ctx context.Context, id string) *BoardState {
	if bs := e.board(id); bs != nil || e.sh == nil || e.sh.DBError() != nil || !e.Ready() {
		return bs
	}
	ctx, cancel := context.WithTimeout(ctx, lookupWait)
	defer cancel()
	if e.sh.awaitRound(ctx, false) != nil {
		return nil
	}
	return e.board(id)
}

func errBoardNotFound(id string) error { return podium.BoardNotFound(id) }
