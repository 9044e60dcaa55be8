package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ReviewItem is a held submission with what became of it.
type ReviewItem struct {
	ID          string          `json:"id"`
	Board       string          `json:"board"`
	Period      string          `json:"period"`
	Player      string          `json:"player"`
	Keys        []int64         `json:"keys"`
	Meta        json.RawMessage `json:"meta"`
	SubmittedAt time.Time       `json:"submitted_at"`
	Reason      string          `json:"reason"` // why it was held
	Status      string          `json:"status"` // pending, approved, rejected
	Decision    *Decision       `json:"decision"`
	// Entry is the player's entry now, History their latest log rows and
	// Evidence what is attached (as the server shows them).
	Entry    json.RawMessage `json:"entry"`
	History  []HistoryRow    `json:"history"`
	Evidence json.RawMessage `json:"evidence"`
	// Result is set on an approval: the submission's answer.
	Result *Submitted `json:"result,omitempty"`
}

// Decision is a moderator's decision of an item.
type Decision struct {
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Seq    uint64    `json:"seq,omitempty"` // approved: the log row it wrote
}

// ReviewQuery selects review items; zero fields select everything.
type ReviewQuery struct {
	Board, Player string
	Status        string // pending (default on the server), approved, rejected, all
	Cursor        string // from ReviewPage.NextCursor
	Limit         int
}

// ReviewPage is a page of the review queue.
type ReviewPage struct {
	Items      []ReviewItem `json:"items"`
	NextCursor *string      `json:"next_cursor"`
}

// Review lists the review queue (admin or the review scope).
func (c *Client) Review(ctx context.Context, q ReviewQuery) (*ReviewPage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"board": q.Board, "player": q.Player, "status": q.Status, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out ReviewPage
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("review"), query: v}, &out)
	return &out, err
}

// ReviewItem reads one item of the queue.
func (c *Client) ReviewItem(ctx context.Context, id string) (*ReviewItem, error) {
	var out ReviewItem
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("review", id)}, &out)
	return &out, err
}

// Approve approves a held submission: it is applied through the write
// path, and the answer carries its result. Deciding an item twice is 409.
func (c *Client) Approve(ctx context.Context, id, reason string) (*ReviewItem, error) {
	return c.decide(ctx, id, "approve", reason)
}

// Reject rejects a held submission (reason required); the player's
// previous entry stays.
func (c *Client) Reject(ctx context.Context, id, reason string) (*ReviewItem, error) {
	return c.decide(ctx, id, "reject", reason)
}

func (c *Client) decide(ctx context.Context, id, verb, reason string) (*ReviewItem, error) {
	var out ReviewItem
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	// A decision is not retried after a lost answer: a second one is 409
	// (what the first did shows in ReviewItem).
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("review", id, verb), body: body, kind: once}, &out)
	return &out, err
}

// FreezePlayer holds every new submission of a player for review (admin).
func (c *Client) FreezePlayer(ctx context.Context, player, reason string) error {
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("players", player, "freeze"), body: body, kind: idempotent}, nil)
	return err
}

// UnfreezePlayer ends a player's freeze (admin); one not frozen is 404.
func (c *Client) UnfreezePlayer(ctx context.Context, player string) error {
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("players", player, "unfreeze"), kind: once}, nil)
	return err
}

// HistoryRow is one logged submission of a player.
type HistoryRow struct {
	Seq    uint64          `json:"seq"`
	Period string          `json:"period"`
	Kind   string          `json:"kind"` // score or delete
	Keys   []int64         `json:"keys,omitempty"`
	At     time.Time       `json:"at"`
	Meta   json.RawMessage `json:"meta"`
	Review json.RawMessage `json:"review,omitempty"` // admins: the approval that wrote it
}

// HistoryPage is a page of a player's history, newest first.
type HistoryPage struct {
	Board      string       `json:"board"`
	Player     string       `json:"player"`
	Items      []HistoryRow `json:"items"`
	NextCursor *string      `json:"next_cursor"`
}

// History reads a player's submissions on a board, newest first; pass
// the previous page's NextCursor to read on (limit 0: the server's 20).
func (c *Client) History(ctx context.Context, board, player, cursor string, limit int) (*HistoryPage, error) {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out HistoryPage
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries", player, "history"), query: v}, &out)
	return &out, err
}
