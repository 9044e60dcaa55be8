package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// TournamentInfo is where a tournament stands (GetTournament).
type TournamentInfo struct {
	Board        string      `json:"board"`
	Title        string      `json:"title,omitempty"` // in ListTournaments
	Tournament   Tournament  `json:"tournament"`
	State        string      `json:"state,omitempty"` // upcoming, open, ended, settled
	Participants int         `json:"participants,omitempty"`
	Entries      int         `json:"entries,omitempty"`
	PointsBoards []string    `json:"points_boards,omitempty"`
	Settlement   *Settlement `json:"settlement,omitempty"`
}

// Settlement summarises a tournament's settlement runs.
type Settlement struct {
	SettledAt time.Time `json:"settled_at"`
	Runs      int       `json:"runs"`
	Players   int       `json:"players"`
	Paid      int64     `json:"paid"`
	Epoch     uint64    `json:"epoch"`
	Node      string    `json:"node"`
}

// Joined is the answer of Join.
type Joined struct {
	Board        string `json:"board"`
	Player       string `json:"player"`
	Joined       bool   `json:"joined"`
	Already      bool   `json:"already"`
	N            int    `json:"n"`
	Participants int    `json:"participants"`
}

// Participants is a page of a tournament's participants, in join order.
type Participants struct {
	Board        string `json:"board"`
	Total        int    `json:"total"`
	Participants []struct {
		Player   string    `json:"player"`
		N        int       `json:"n"`
		JoinedAt time.Time `json:"joined_at"`
	} `json:"participants"`
}

// SettleRun is the answer of Settle.
type SettleRun struct {
	Board        string    `json:"board"`
	Run          int       `json:"run"`
	SettledAt    time.Time `json:"settled_at"`
	Players      int       `json:"players"`
	Paid         int64     `json:"paid"`
	Changed      int       `json:"changed"`
	Credits      int       `json:"credits"`
	Rebased      int       `json:"rebased"`
	Epoch        uint64    `json:"epoch"`
	PointsBoards []string  `json:"points_boards"`
}

// Payouts is a page of a tournament's payouts, best rank first.
type Payouts struct {
	Board   string `json:"board"`
	Total   int    `json:"total"`
	Payouts []struct {
		Player string    `json:"player"`
		Rank   *int      `json:"rank"` // nil: no longer ranked
		Points int64     `json:"points"`
		At     time.Time `json:"at"`
	} `json:"payouts"`
}

func pageQuery(offset, limit int) url.Values {
	q := url.Values{}
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(limit))
	return q
}

// ListTournaments lists the tournaments the caller may read.
func (c *Client) ListTournaments(ctx context.Context) ([]TournamentInfo, error) {
	var out struct {
		Tournaments []TournamentInfo `json:"tournaments"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("tournaments")}, &out)
	return out.Tournaments, err
}

// GetTournament says where a tournament stands.
func (c *Client) GetTournament(ctx context.Context, board string) (*TournamentInfo, error) {
	var out TournamentInfo
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("tournaments", board)}, &out)
	return &out, err
}

// Join joins player to a tournament (submit scope); joining twice is not
// an error (Already).
func (c *Client) Join(ctx context.Context, board, player string) (*Joined, error) {
	var out Joined
	body := struct {
		Player string `json:"player"`
	}{player}
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("tournaments", board, "join"), body: body, kind: idempotent}, &out)
	return &out, err
}

// TournamentParticipants reads a page of participants (limit 1-1000).
func (c *Client) TournamentParticipants(ctx context.Context, board string, offset, limit int) (*Participants, error) {
	var out Participants
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("tournaments", board, "participants"), query: pageQuery(offset, limit)}, &out)
	return &out, err
}

// Settle settles a tournament now (admin); runs pay only differences, so
// a repeated run is harmless.
func (c *Client) Settle(ctx context.Context, board string) (*SettleRun, error) {
	var out SettleRun
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("tournaments", board, "settle"), kind: idempotent}, &out)
	return &out, err
}

// TournamentPayouts reads a page of payouts (limit 1-1000).
func (c *Client) TournamentPayouts(ctx context.Context, board string, offset, limit int) (*Payouts, error) {
	var out Payouts
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("tournaments", board, "payouts"), query: pageQuery(offset, limit)}, &out)
	return &out, err
}

// Feed reads the newest events of one board (board "": every board the
// caller may read); limit 0 is the server's default.
func (c *Client) Feed(ctx context.Context, board string, limit int) (*Feed, error) {
	q := url.Values{}
	if board != "" {
		q.Set("board", board)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out Feed
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("feed"), query: q}, &out)
	return &out, err
}
