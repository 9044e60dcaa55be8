package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// What the nodes of a shared store tell each other: notices of commits
// (heads and rows), changes of the change feed and revocations, and the
// state of this node's view of the database (shared.go).

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
