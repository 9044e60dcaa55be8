package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ListBoards lists the public boards and those the key may read, in id
// order, reading every page of the list (see BoardsPage); it stops at the
// first error. With many boards, BoardsPage reads them a page at a time.
func (c *Client) ListBoards(ctx context.Context) ([]Board, error) {
	var all []Board
	cursor := ""
	for {
		page, err := c.BoardsPage(ctx, cursor, 0)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Boards...)
		if page.NextCursor == nil {
			return all, nil
		}
		cursor = *page.NextCursor
	}
}

// BoardPage is a page of the board list.
type BoardPage struct {
	Boards []Board `json:"boards"`
	// NextCursor reads on (BoardsPage); nil on the last page. A page may
	// hold fewer boards than asked for, even none, and still have one.
	NextCursor *string `json:"next_cursor"`
}

// BoardsPage reads one page of the boards the key may read, in id order:
// cursor "" for the first, else the previous page's NextCursor; limit 0
// for the server's default (1000, the most).
func (c *Client) BoardsPage(ctx context.Context, cursor string, limit int) (*BoardPage, error) {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out BoardPage
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards"), query: v}, &out)
	return &out, err
}

// GetBoard reads a board (404 board_not_found).
func (c *Client) GetBoard(ctx context.Context, board string) (*Board, error) {
	var out Board
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board)}, &out)
	return &out, err
}

// PutBoard creates or updates a board (admin). created is true for a new
// board (201). A change of keys, mode or cadence on a board with entries
// is 409 conflict.
func (c *Client) PutBoard(ctx context.Context, board string, spec BoardSpec) (b *Board, created bool, err error) {
	var out Board
	m, err := c.call(ctx, request{method: http.MethodPut, path: path("boards", board), body: spec, kind: idempotent}, &out)
	return &out, m.Status == http.StatusCreated, err
}

// DeleteBoard deletes a board with its entries and log (admin).
func (c *Client) DeleteBoard(ctx context.Context, board string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("boards", board), kind: idempotent}, nil)
	return err
}

// WriteOptions tune one write.
type WriteOptions struct {
	// IdempotencyKey replaces the generated key: keep it to retry the
	// write later (after a restart of the caller) without applying it twice.
	IdempotencyKey string
}

func writeKey(opts []WriteOptions) string {
	if len(opts) > 0 {
		return opts[0].IdempotencyKey
	}
	return ""
}

// Submit submits one score to board (submit scope) and answers the entry
// it left: Submitted.Entry.Rank is the player's rank after it, Improved
// whether it changed the entry (Previous is the entry it replaced). It carries an
// Idempotency-Key, so its retries (network errors, 429, 503 and
// outcome_unknown) apply it at most once; Submitted.Replayed says the
// answer came from an earlier attempt.
func (c *Client) Submit(ctx context.Context, board string, s Score, opts ...WriteOptions) (*Submitted, error) {
	var out Submitted
	s.Board = ""
	m, err := c.call(ctx, request{method: http.MethodPost, path: path("boards", board, "scores"), body: s,
		kind: keyed, idem: writeKey(opts)}, &out)
	out.Replayed = m.Replayed
	return &out, err
}

// SubmitBatch submits up to 10,000 scores, each naming its board, in one
// request with one Idempotency-Key. Results are in the order of scores;
// an item refused alone has Error set.
func (c *Client) SubmitBatch(ctx context.Context, scores []Score, opts ...WriteOptions) ([]BatchResult, error) {
	var out struct {
		Results []BatchResult `json:"results"`
	}
	body := struct {
		Scores []Score `json:"scores"`
	}{scores}
	m, err := c.call(ctx, request{method: http.MethodPost, path: path("scores"), body: body, kind: keyed, idem: writeKey(opts)}, &out)
	for i := range out.Results {
		out.Results[i].Replayed = m.Replayed
	}
	return out.Results, err
}

// ReadOptions select what a read sees. Zero values are the server's
// defaults (the current period, public players only).
type ReadOptions struct {
	Period        string // current, previous, or a period id
	IncludeHidden bool   // admin: hidden players too
}

func (o ReadOptions) query() url.Values {
	q := url.Values{}
	if o.Period != "" {
		q.Set("period", o.Period)
	}
	if o.IncludeHidden {
		q.Set("include_hidden", "true")
	}
	return q
}

// Top reads a page of board's ranking: it skips offset entries (0 for
// the top) and answers at most limit (1 to 1,000), so ranks offset+1 to
// offset+limit. Page.Total counts every entry, for paging: the next page
// is at offset+limit while that is below Total.
func (c *Client) Top(ctx context.Context, board string, offset, limit int, opts ReadOptions) (*Page, error) {
	q := opts.query()
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(limit))
	var out Page
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries"), query: q}, &out)
	return &out, err
}

// TopPercent reads a page of the top percent of board's ranking (above 0,
// at most 100; sent rounded to 2 decimals): ranks offset+1 to
// offset+limit, never past Page.TopCount = ceil(Total * percent / 100).
// The next page is at offset+limit while that is below TopCount.
func (c *Client) TopPercent(ctx context.Context, board string, percent float64, offset, limit int, opts ReadOptions) (*Page, error) {
	q := opts.query()
	q.Set("top_percent", strconv.FormatFloat(percent, 'f', 2, 64))
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(limit))
	var out Page
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries"), query: q}, &out)
	return &out, err
}

// Players reads the entries of players (at most 1,000) in board order;
// players without an entry are left out.
func (c *Client) Players(ctx context.Context, board string, players []string, opts ReadOptions) (*Page, error) {
	q := opts.query()
	q.Set("players", strings.Join(players, ","))
	var out Page
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries"), query: q}, &out)
	return &out, err
}

// Entry reads one player's entry (404 entry_not_found).
func (c *Client) Entry(ctx context.Context, board, player string, opts ReadOptions) (*PlayerEntry, error) {
	var out PlayerEntry
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries", player), query: opts.query()}, &out)
	return &out, err
}

// Around reads the entries from the player's rank-radius to rank+radius
// (radius 0-500).
func (c *Client) Around(ctx context.Context, board, player string, radius int, opts ReadOptions) (*Page, error) {
	q := opts.query()
	q.Set("radius", strconv.Itoa(radius))
	var out Page
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries", player, "around"), query: q}, &out)
	return &out, err
}

// Periods lists the periods of board that have entries.
func (c *Client) Periods(ctx context.Context, board string) (*Periods, error) {
	var out Periods
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "periods")}, &out)
	return &out, err
}

// DeleteEntry removes a player's entry (admin); period "" is the current.
func (c *Client) DeleteEntry(ctx context.Context, board, player, period string) error {
	q := url.Values{}
	if period != "" {
		q.Set("period", period)
	}
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("boards", board, "entries", player), query: q, kind: idempotent}, nil)
	return err
}
