package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// What the nodes of a shared store tell each other: notices of commits
// (heads and rows), changes of the change feed and revocations, and the
// state of this node's view of the database (shared.go).

// maxNoticeRows bounds the rows a node keeps from notices between two
// rounds of its follower; past it, rows are dropped and the log is read.
const maxNoticeRows = 20000

// notice records a notice from the broker and wakes the follower.
func (sh *cluster) notice(n podium.Notice) {
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
	if len(n.Revoked) > 0 {
		sh.revokeNow(n.Revoked)
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

func (sh *cluster) poke() {
	select {
	case sh.wake <- struct{}{}:
	default:
	}
}

func (sh *cluster) take() (map[string]uint64, map[string][]podium.Row, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	adv, rows, ch := sh.advance, sh.rows, sh.changes
	sh.advance, sh.rows, sh.nrows, sh.changes = map[string]uint64{}, map[string][]podium.Row{}, 0, false
	return adv, rows, ch
}

// putBack returns to the notices' record heads and rows a round took but
// did not apply (a read failed, or the change feed has more to read
// first), so that the next round applies them; rows past the bound are
// dropped (the log is read instead).
func (sh *cluster) putBack(adv map[string]uint64, rows map[string][]podium.Row) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for b, s := range adv {
		if s > sh.advance[b] {
			sh.advance[b] = s
		}
	}
	for b, r := range rows {
		if sh.nrows+len(r) <= maxNoticeRows {
			sh.rows[b] = append(sh.rows[b], r...)
			sh.nrows += len(r)
		}
	}
}

// dbFailed and dbWorked track whether the database answers.
func (sh *cluster) dbFailed(err error) { sh.dbErr.Store(&err) }

func (sh *cluster) dbWorked() { sh.dbErr.Store(nil) }

// DBError is the last failure to reach the database while it lasts.
func (sh *cluster) DBError() error {
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
func (sh *cluster) publish(n podium.Notice) {
	if sh.broker == nil {
		return
	}
	n.Node = sh.node
	if err := sh.broker.Publish(context.Background(), n); err != nil {
		sh.e.log.Debug("broker: publish", "err", err)
	}
}

// maxRowsPerNotice caps the rows a notice carries: a larger group is
// announced by its seq alone, and the others read it from the log.
const maxRowsPerNotice = 128

// publishRows announces a committed group: per board its new seq and,
// unless the group is large, the log rows themselves, so that the other
// nodes need not read them back from the database.
func (sh *cluster) publishRows(g *Group) {
	if sh.broker == nil {
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
		sh.publish(n)
	}
}

// publishChange tells the other nodes that the change feed moved.
func (sh *cluster) publishChange() { sh.publish(podium.Notice{Change: 1}) }

// changed is called after a local metadata change (a player, a key);
// revoked names the keys or sessions it deleted, which the other nodes
// then refuse on receipt of the notice (revokeNow), without waiting for
// their follower, which may be behind the writer's queue. It is called
// on a store of its own too (sh nil), where it does nothing.
func (sh *cluster) changed(revoked ...string) {
	if sh == nil {
		return
	}
	if len(revoked) > podium.MaxRevokedPerNotice {
		revoked = nil // the change feed carries them
	}
	sh.publish(podium.Notice{Change: 1, Revoked: revoked})
}

// revokeNow ends at once, on this node, the credentials of keys or
// sessions another node deleted (a notice's Revoked): they are forgotten
// and their streams end. The change feed, applied later by the follower,
// agrees: it removes them too. It runs on the broker's goroutine, not
// behind the writer.
func (sh *cluster) revokeNow(ids []string) {
	e := sh.e
	for _, id := range ids {
		e.keys.remove(id)
		e.life.revoked(id) // module.go: sessions
		if e.listener != nil {
			e.listener.KeyRevoked(id)
		}
	}
}
