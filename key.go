package podium

import (
	"strings"
	"time"
)

// Scopes an API key can hold.
const (
	ScopeRead   = "read"
	ScopeSubmit = "submit"
	ScopeAdmin  = "admin"
)

// APIKey is a scoped key created by the admin. Only the SHA-256 of the
// secret is stored; the secret is shown once, at creation.
type APIKey struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Scopes    []string  `json:"scopes"`
	Boards    []string  `json:"boards"` // board-id prefixes; empty means every board
	Hash      string    `json:"-"`      // hex SHA-256 of the secret
	CreatedAt time.Time `json:"created_at"`
	// Player is set on the principal of a player session (session.go):
	// its id is the session's, it holds no scope, and it acts as Player.
	Player string `json:"-"`
}

// Normalize validates k's name, scopes and board prefixes.
func (k *APIKey) Normalize() error {
	if k.Name == "" || len(k.Name) > MaxNameLen {
		return Errorf(ECodeInvalid, "name must be 1 to %d bytes", MaxNameLen)
	}
	if err := validText("name", k.Name); err != nil {
		return err
	}
	if len(k.Scopes) == 0 || len(k.Scopes) > 5 {
		return Errorf(ECodeInvalid, "scopes must list 1 to 5 of read, submit, admin, sessions, review")
	}
	for _, s := range k.Scopes {
		if s != ScopeRead && s != ScopeSubmit && s != ScopeAdmin && s != ScopeSessions && s != ScopeReview {
			return Errorf(ECodeInvalid, "scope %q is not one of read, submit, admin, sessions, review", s)
		}
	}
	if len(k.Boards) > 100 {
		return Errorf(ECodeInvalid, "boards lists more than 100 prefixes")
	}
	for _, p := range k.Boards {
		if p == "" || len(p) > MaxBoardIDLen || strings.ContainsFunc(p, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-", r))
		}) {
			return Errorf(ECodeInvalid, "board prefix %q must be 1 to %d characters of [a-z0-9_.:-]", p, MaxBoardIDLen)
		}
	}
	if k.Boards == nil {
		k.Boards = []string{}
	}
	return nil
}

// Allows reports whether k holds scope (admin holds every scope) and, when
// board is not empty, whether one of its prefixes covers board.
func (k *APIKey) Allows(scope, board string) bool {
	ok := false
	for _, s := range k.Scopes {
		if s == scope || s == ScopeAdmin {
			ok = true
		}
	}
	if !ok {
		return false
	}
	if board == "" || len(k.Boards) == 0 {
		return true
	}
	for _, p := range k.Boards {
		if strings.HasPrefix(board, p) {
			return true
		}
	}
	return false
}
