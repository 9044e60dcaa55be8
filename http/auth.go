package http

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// authKey is the request context's key for the request's authentication
// (withAuth).
type authKey struct{}

// authOnce is a request's authentication, done at most once: the wrapper
// (api), the rate limit and the handler all read the principal from it, so
// a request goes on under the key it was admitted with even if the key is
// revoked meanwhile, and the secret is hashed and looked up once.
type authOnce struct {
	once sync.Once
	k    *podium.APIKey
	err  error
}

// withAuth returns r with room in its context for the principal, filled
// by the first call to principal.
func withAuth(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), authKey{}, &authOnce{}))
}

// principal returns the API key a request carries: nil when it carries
// none, ECodeUnauthenticated when the key is malformed or unknown. A
// request through api is authenticated once (withAuth); others each time.
func (s *base) principal(r *http.Request) (*podium.APIKey, error) {
	var k *podium.APIKey
	var err error
	if a, _ := r.Context().Value(authKey{}).(*authOnce); a != nil {
		a.once.Do(func() { a.k, a.err = s.authenticate(r) })
		k, err = a.k, a.err
	} else {
		k, err = s.authenticate(r)
	}
	if k != nil && s.afterAuth != nil {
		s.afterAuth(r)
	}
	return k, err
}

// authenticate reads the Authorization header and finds its key.
func (s *base) authenticate(r *http.Request) (*podium.APIKey, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return nil, podium.Errorf(podium.ECodeUnauthenticated, "the Authorization header must be \"Bearer <key>\"")
	}
	k, ok := s.auth.Authenticate(strings.TrimSpace(h[len(prefix):]))
	if !ok {
		return nil, podium.Errorf(podium.ECodeUnauthenticated, "the API key is not valid (unknown or revoked)")
	}
	return k, nil
}

// require returns the request's key if it holds scope for board ("" for
// no particular board): 401 without a valid key, 403 without the scope.
func (s *base) require(r *http.Request, scope, board string) (*podium.APIKey, error) {
	k, err := s.principal(r)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, podium.Errorf(podium.ECodeUnauthenticated, "this request needs an API key: send Authorization: Bearer <key>")
	}
	if k.Player != "" { // a player session holds no scope (sessions.go)
		return nil, podium.Errorf(podium.ECodeForbidden, "a player session may not do this: it reads public boards and submits its own scores")
	}
	if !k.Allows(scope, board) {
		if board != "" && k.Allows(scope, "") {
			return nil, podium.Errorf(podium.ECodeForbidden, "this key is limited to other boards than %q", board)
		}
		return nil, podium.Errorf(podium.ECodeForbidden, "this key lacks the %s scope", scope)
	}
	return k, nil
}

// requireGlobalAdmin allows only admin keys not limited to board prefixes
// (players and keys are not board-scoped).
func (s *base) requireGlobalAdmin(r *http.Request) (*podium.APIKey, error) {
	k, err := s.require(r, podium.ScopeAdmin, "")
	if err != nil {
		return nil, err
	}
	if len(k.Boards) > 0 {
		return nil, podium.Errorf(podium.ECodeForbidden, "this admin key is limited to some boards; this request needs an unrestricted admin key")
	}
	return k, nil
}

// Private ids (docs/API.md): a board or contest that is not public is, to
// a caller who may not read it, exactly an unknown id. The order is what
// keeps answers from telling the two apart:
//  1. the credential: a malformed, unknown or revoked one is 401 whatever
//     the id (so it is checked before the id is looked up);
//  2. the id: unknown is 404;
//  3. read access: without it, the same 404 as step 2, word for word.
// Routes that need a scope whatever the id (writes, admin) refuse with
// 401/403 before they look the id up, so their answers do not depend on
// it either.

// mayRead is the read rule: anyone reads a public board or contest; a
// private one needs a key (not a player session) with the read scope for
// its id.
func mayRead(k *podium.APIKey, id string, public bool) bool {
	return public || k != nil && k.Player == "" && k.Allows(podium.ScopeRead, id)
}

// readableBoard returns the board id names and the request's principal
// (nil without credentials) if the request may read the board:
// ECodeUnauthenticated for a bad credential, whatever the id, then
// ECodeBoardNotFound for an unknown board and for one it may not read.
func (s *base) readableBoard(r *http.Request, id string) (engine.BoardInfo, *podium.APIKey, error) {
	k, err := s.principal(r)
	if err != nil {
		return engine.BoardInfo{}, nil, err
	}
	bi, err := s.acc.Board(id)
	if err != nil {
		return engine.BoardInfo{}, nil, err
	}
	if !mayRead(k, bi.ID, bi.Public) {
		return engine.BoardInfo{}, nil, podium.BoardNotFound(bi.ID)
	}
	return bi, k, nil
}

// checkHeaders refuses a request whose credentials or Idempotency-Key are
// ambiguous: a header given twice (a proxy that takes the last value would
// act for another principal, or under another key, than podium, which
// would take the first), or an Idempotency-Key that is empty or longer
// than 255 bytes (the documented 1-255 bytes; an empty one used to be
// ignored, so a retry thought safe was not).
func checkHeaders(r *http.Request) error {
	for _, name := range []string{"Authorization", "Idempotency-Key"} {
		if n := len(r.Header[name]); n > 1 {
			return podium.Errorf(podium.ECodeInvalid, "the %s header is given %d times; send it once", name, n)
		}
	}
	if v, ok := r.Header["Idempotency-Key"]; ok && (v[0] == "" || len(v[0]) > 255) {
		return podium.Errorf(podium.ECodeInvalid, "Idempotency-Key must be 1 to 255 bytes (got %d)", len(v[0]))
	}
	return nil
}
