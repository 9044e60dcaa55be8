package stream

import (
	"time"

	"github.com/podiumhq/podium"
)

// CanRead is the read rule for a board, as streams apply it at subscribe
// time and again whenever a board's visibility or generation changes:
// anyone may read a public board; a private one needs a key (nil is the
// anonymous principal; a player session holds no scope) with the read
// scope for it. It returns nil, or for a board the principal may not read
// the ECodeBoardNotFound of an unknown board, so that a private id cannot
// be probed (docs/API.md, "Private ids").
func CanRead(key *podium.APIKey, board string, public bool) error {
	if public || key != nil && key.Player == "" && key.Allows(podium.ScopeRead, board) {
		return nil
	}
	return podium.BoardNotFound(board)
}

// errRevoked ends the connections of a revoked key.
var errRevoked = podium.Errorf(podium.ECodeUnauthenticated, "the API key of this connection was revoked")

// KeyRevoked ends every connection opened with the API key id, at once:
// Next returns ok=false and Err says why. A connection that authenticated
// with the key but connects only now is refused. The engine calls it when
// a key is deleted; it does not block.
func (h *Hub) KeyRevoked(id string) {
	h.mu.Lock()
	now := h.cfg.Now()
	h.revoked[id] = now
	h.revokedOrder = append(h.revokedOrder, revocation{id: id, at: now})
	h.forgetRevocations(now)
	conns := make([]*Conn, 0, len(h.byKey[id]))
	for c := range h.byKey[id] {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.end(errRevoked)
	}
}

// revokedKeep is how long the hub remembers a revoked id. The memory only
// covers the moment between a request's authentication and its Connect
// (a lookup in the same request): afterwards the engine no longer
// authenticates the id, so the hub need not remember it. Forgetting keeps
// memory bounded by the revocations of the last minute, not of the
// process's life (sessions are revoked and expire all the time).
const revokedKeep = time.Minute

// revocation is one id in the hub's memory of revoked keys.
type revocation struct {
	id string
	at time.Time
}

// forgetRevocations drops the revocations older than revokedKeep; h.mu
// held.
func (h *Hub) forgetRevocations(now time.Time) {
	n := 0
	for n < len(h.revokedOrder) && now.Sub(h.revokedOrder[n].at) > revokedKeep {
		if r := h.revokedOrder[n]; h.revoked[r.id].Equal(r.at) { // not revoked again since
			delete(h.revoked, r.id)
		}
		n++
	}
	if n > 0 {
		h.revokedOrder = append(h.revokedOrder[:0], h.revokedOrder[n:]...)
	}
}
