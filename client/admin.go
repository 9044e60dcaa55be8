package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// GetPlayer reads a player (read scope; 404 not_found).
func (c *Client) GetPlayer(ctx context.Context, player string) (*Player, error) {
	var out Player
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("players", player)}, &out)
	return &out, err
}

// PutPlayer names, hides or shows a player (admin).
func (c *Client) PutPlayer(ctx context.Context, player string, spec PlayerSpec) (*Player, error) {
	var out Player
	_, err := c.call(ctx, request{method: http.MethodPut, path: path("players", player), body: spec, kind: idempotent}, &out)
	return &out, err
}

// CreateKey creates an API key (admin); the answer's Key is its secret,
// shown only here. A retry could create a second key, so it is retried
// only when the server says nothing was applied.
func (c *Client) CreateKey(ctx context.Context, spec APIKeySpec) (*APIKey, error) {
	var out APIKey
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("keys"), body: spec, kind: once}, &out)
	return &out, err
}

// ListKeys lists the API keys, without secrets (admin).
func (c *Client) ListKeys(ctx context.Context) ([]APIKey, error) {
	var out struct {
		Keys []APIKey `json:"keys"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("keys")}, &out)
	return out.Keys, err
}

// DeleteKey revokes an API key at once (admin; 404 not_found).
func (c *Client) DeleteKey(ctx context.Context, id string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("keys", id), kind: idempotent}, nil)
	return err
}

// Check compares the live indexes with the database and the log (admin).
func (c *Client) Check(ctx context.Context) (*CheckReport, error) {
	var out CheckReport
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("admin", "check"), kind: idempotent}, &out)
	return &out, err
}

// Reload rebuilds the indexes from the database (admin).
func (c *Client) Reload(ctx context.Context) (*ReloadReport, error) {
	var out ReloadReport
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("admin", "reload"), kind: idempotent}, &out)
	return &out, err
}

// IssueSession issues a session for player (sessions scope); the answer's
// Token is shown only here. It carries an Idempotency-Key: the server
// answers a repeated one with 409 conflict naming the session issued (its
// token cannot be shown again), so the client does not retry it after a
// network error.
func (c *Client) IssueSession(ctx context.Context, player string, spec SessionSpec, opts ...WriteOptions) (*Session, error) {
	var out Session
	idem := writeKey(opts)
	if idem == "" {
		idem = NewIdempotencyKey()
	}
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("players", player, "sessions"), body: spec, kind: once, idem: idem}, &out)
	return &out, err
}

// ListSessions lists a player's unexpired sessions, oldest first.
func (c *Client) ListSessions(ctx context.Context, player string) ([]Session, error) {
	var out struct {
		Sessions []Session `json:"sessions"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("players", player, "sessions")}, &out)
	return out.Sessions, err
}

// RevokeSession ends one session (404 not_found).
func (c *Client) RevokeSession(ctx context.Context, player, id string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("players", player, "sessions", id), kind: idempotent}, nil)
	return err
}

// RevokeSessions ends every session of player and says how many.
func (c *Client) RevokeSessions(ctx context.Context, player string) (int, error) {
	var out struct {
		Revoked int `json:"revoked"`
	}
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("players", player, "sessions"), kind: idempotent}, &out)
	return out.Revoked, err
}

// RefreshSession gives a session a new token and a new TTL; the old token
// stops working, so a refresh is never retried after a network error.
func (c *Client) RefreshSession(ctx context.Context, player, id string) (*Session, error) {
	var out Session
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("players", player, "sessions", id, "refresh"), kind: once}, &out)
	return &out, err
}

// RestoreEntry is one entry for Restore: in Period, Player's entry becomes
// exactly Keys, reached at At, with Meta.
type RestoreEntry struct {
	Period string          `json:"period"`
	Player string          `json:"player"`
	Keys   []int64         `json:"keys"`
	At     time.Time       `json:"at"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

// RestoreResult is one item of a restore answer: Status restored (Seq is
// the restore's seq in the board's log) or unchanged, or Error.
type RestoreResult struct {
	Period string     `json:"period"`
	Player string     `json:"player"`
	Status string     `json:"status"`
	Seq    uint64     `json:"seq,omitempty"`
	Error  *ItemError `json:"error,omitempty"`
}

// Restored is the answer to Restore.
type Restored struct {
	Results   []RestoreResult `json:"results"`
	Restored  int             `json:"restored"`
	Unchanged int             `json:"unchanged"`
	Refused   int             `json:"refused"`
}

// Restore sets up to 1,000 entries of a board exactly, with their
// original times and periods (admin; what podium import uses). A repeat
// changes nothing (the items come back unchanged), so it is retried.
func (c *Client) Restore(ctx context.Context, board string, entries []RestoreEntry) (*Restored, error) {
	var out Restored
	body := struct {
		Entries []RestoreEntry `json:"entries"`
	}{entries}
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("boards", board, "restore"), body: body, kind: idempotent}, &out)
	return &out, err
}
