package stream

import "github.com/podiumhq/podium"

// CanRead is the read rule for a board, as streams apply it at subscribe
// time and again whenever a board's visibility or generation changes:
// anyone may read a public board; a private one needs a key (nil is the
// anonymous principal) with the read scope for it. It returns nil,
// ECodeUnauthenticated or ECodeForbidden.
func CanRead(key *podium.APIKey, board string, public bool) error {
	if public {
		return nil
	}
	if key == nil {
		return podium.Errorf(podium.ECodeUnauthenticated, "board %q is private: connect with an API key that may read it", board)
	}
	if !key.Allows(podium.ScopeRead, board) {
		return podium.Errorf(podium.ECodeForbidden, "this key may not read board %q", board)
	}
	return nil
}

// errRevoked ends the connections of a revoked key.
var errRevoked = podium.Errorf(podium.ECodeUnauthenticated, "the API key of this connection was revoked")

// KeyRevoked ends every connection opened with the API key id, at once:
// Next returns ok=false and Err says why. A connection that authenticated
// with the key but connects only now is refused. The engine calls it when
// a key is deleted; it does not block.
func (h *Hub) KeyRevoked(id string) {
	h.mu.Lock()
	h.revoked[id] = struct{}{}
	conns := make([]*Conn, 0, len(h.byKey[id]))
	for c := range h.byKey[id] {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.end(errRevoked)
	}
}
