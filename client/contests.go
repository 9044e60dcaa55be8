package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ContestSpec is the body of PutContest.
type ContestSpec struct {
	Title      string          `json:"title,omitempty"`
	Start      time.Time       `json:"start"`
	End        time.Time       `json:"end"`
	Freeze     *time.Time      `json:"freeze,omitempty"`
	FirstBlood []int64         `json:"first_blood,omitempty"` // 3 percents
	BloodRule  string          `json:"blood_rule,omitempty"`  // auto (default), percent or gzctf
	Public     bool            `json:"public"`
	Meta       json.RawMessage `json:"meta,omitempty"`
}

// Contest is a CTF contest.
type Contest struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Start      time.Time       `json:"start"`
	End        time.Time       `json:"end"`
	Freeze     *time.Time      `json:"freeze"`
	Revealed   bool            `json:"revealed"`
	FirstBlood [3]int64        `json:"first_blood"`
	BloodRule  string          `json:"blood_rule"` // auto, percent or gzctf
	Public     bool            `json:"public"`
	Meta       json.RawMessage `json:"meta"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	State      string          `json:"state"` // upcoming, running, frozen, ended, final
}

// Scoring is how a challenge's value follows its solves.
type Scoring struct {
	Function   string  `json:"function,omitempty"` // static, ctfd_linear, ctfd_logarithmic, rctf, gzctf
	Value      int64   `json:"value"`
	Minimum    int64   `json:"minimum,omitempty"`
	Decay      int64   `json:"decay,omitempty"`
	MinRate    float64 `json:"min_rate,omitempty"`
	Difficulty float64 `json:"difficulty,omitempty"`
}

// ChallengeSpec is the body of PutChallenge.
type ChallengeSpec struct {
	Name     string  `json:"name,omitempty"`
	Category string  `json:"category,omitempty"`
	Order    int64   `json:"order,omitempty"`
	Scoring  Scoring `json:"scoring"`
}

// Blood is a first blood of a challenge.
type Blood struct {
	Challenge string     `json:"challenge,omitempty"` // in FirstBloods
	Position  int        `json:"position"`
	Team      string     `json:"team"`
	Name      string     `json:"name"`
	At        *time.Time `json:"at"`
}

// Challenge is a challenge; Value, Solves and FirstBloods are set when
// listed.
type Challenge struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Category    string  `json:"category"`
	Order       int64   `json:"order"`
	Hidden      bool    `json:"hidden"` // out of the public listings and the standings
	Scoring     Scoring `json:"scoring"`
	Value       int64   `json:"value"`
	Solves      int64   `json:"solves"`
	FirstBloods []Blood `json:"first_bloods"`
}

// Attempt is one logged verdict.
type Attempt struct {
	ID        int64     `json:"id"`
	Team      string    `json:"team"`
	Challenge string    `json:"challenge"`
	Result    string    `json:"result"` // solved, wrong, duplicate, unknown_challenge, closed
	Correct   bool      `json:"correct"`
	At        time.Time `json:"at"`
	Key       string    `json:"key"`
	Seq       uint64    `json:"seq,omitempty"`
}

// Award is one solve in a team's standing.
type Award struct {
	Challenge  string    `json:"challenge"`
	At         time.Time `json:"at"`
	Value      int64     `json:"value"`
	FirstBlood int       `json:"first_blood,omitempty"`
	Bonus      int64     `json:"bonus"`
	Points     int64     `json:"points"`
}

// Standing is a team's line in the standings.
type Standing struct {
	Rank        *int       `json:"rank"` // nil: hidden, or no solve
	Team        string     `json:"team"`
	Name        string     `json:"name"`
	Hidden      bool       `json:"hidden,omitempty"`
	Score       int64      `json:"score"`
	Solved      int        `json:"solved"`
	LastSolveAt *time.Time `json:"last_solve_at"`
	Solves      []Award    `json:"solves,omitempty"`
}

// AttemptResult is the answer of Attempt.
type AttemptResult struct {
	Contest   string    `json:"contest"`
	Attempt   Attempt   `json:"attempt"`
	Standing  *Standing `json:"standing"`
	Challenge *struct {
		ID     string `json:"id"`
		Value  int64  `json:"value"`
		Solves int64  `json:"solves"`
	} `json:"challenge,omitempty"`
	Replayed bool `json:"-"` // answered from an earlier attempt with the same key
}

// Attempts is a page of the audit log.
type Attempts struct {
	Contest   string    `json:"contest"`
	Attempts  []Attempt `json:"attempts"`
	NextAfter int64     `json:"next_after"`
}

// Standings is a page of standings.
type Standings struct {
	Contest   string     `json:"contest"`
	View      string     `json:"view"` // public, live, snapshot
	Frozen    bool       `json:"frozen"`
	Cutoff    *time.Time `json:"cutoff"`
	At        *time.Time `json:"at,omitempty"` // a snapshot's time
	Seq       uint64     `json:"seq"`
	Total     int        `json:"total"`
	Standings []Standing `json:"standings"`
}

// TeamStanding is one team's standing with its solves.
type TeamStanding struct {
	Contest  string   `json:"contest"`
	View     string   `json:"view"`
	Frozen   bool     `json:"frozen"`
	Seq      uint64   `json:"seq"`
	Standing Standing `json:"standing"`
}

// Chart is the score over time of the top teams.
type Chart struct {
	Contest string     `json:"contest"`
	View    string     `json:"view"`
	Frozen  bool       `json:"frozen"`
	Start   time.Time  `json:"start"`
	End     time.Time  `json:"end"`
	Cutoff  *time.Time `json:"cutoff"`
	Series  []struct {
		Team   string   `json:"team"`
		Name   string   `json:"name"`
		Points []Sample `json:"points"`
	} `json:"series"`
}

// Sample is one point of a chart: [time, score] on the wire.
type Sample struct {
	At    time.Time
	Score int64
}

// UnmarshalJSON reads a [time, score] pair.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var pair [2]json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if err := json.Unmarshal(pair[0], &s.At); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &s.Score)
}

// CTFtime is the standings in CTFtime's scoreboard feed format.
type CTFtime struct {
	Tasks     []string `json:"tasks"`
	Standings []struct {
		Pos       int    `json:"pos"`
		Team      string `json:"team"`
		Score     int64  `json:"score"`
		TaskStats map[string]struct {
			Points int64 `json:"points"`
			Time   int64 `json:"time"`
		} `json:"taskStats"`
		LastAccept int64 `json:"lastAccept"`
	} `json:"standings"`
}

// View selects public or live standings ("" is the server's default for
// the key).
type View string

// Views of a contest.
const (
	ViewDefault View = ""
	ViewPublic  View = "public"
	ViewLive    View = "live"
)

func (v View) query() url.Values {
	q := url.Values{}
	if v != "" {
		q.Set("view", string(v))
	}
	return q
}

// ListContests lists the contests the caller may read.
func (c *Client) ListContests(ctx context.Context) ([]Contest, error) {
	var out struct {
		Contests []Contest `json:"contests"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests")}, &out)
	return out.Contests, err
}

// GetContest reads a contest (404 not_found).
func (c *Client) GetContest(ctx context.Context, id string) (*Contest, error) {
	var out Contest
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", id)}, &out)
	return &out, err
}

// PutContest creates or replaces a contest (admin); created is true on 201.
func (c *Client) PutContest(ctx context.Context, id string, spec ContestSpec) (ct *Contest, created bool, err error) {
	var out Contest
	m, err := c.call(ctx, request{method: http.MethodPut, path: path("contests", id), body: spec, kind: idempotent}, &out)
	return &out, m.Status == http.StatusCreated, err
}

// DeleteContest deletes a contest with everything it holds (admin).
func (c *Client) DeleteContest(ctx context.Context, id string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("contests", id), kind: idempotent}, nil)
	return err
}

// UnfreezeOptions are the options of Unfreeze.
type UnfreezeOptions struct {
	// Force reveals before the contest's end (without it, a conflict
	// error): teams still playing see the live standings.
	Force bool
}

// Unfreeze reveals the final standings (admin). Before the contest's end
// it is a conflict error unless forced.
func (c *Client) Unfreeze(ctx context.Context, id string, opts ...UnfreezeOptions) (*Contest, error) {
	var out Contest
	var body any
	if len(opts) > 0 && opts[0].Force {
		body = struct {
			Force bool `json:"force"`
		}{true}
	}
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("contests", id, "unfreeze"), body: body, kind: idempotent}, &out)
	return &out, err
}

// Refreeze undoes a reveal before the contest's end (admin); after the
// end it is a conflict error.
func (c *Client) Refreeze(ctx context.Context, id string) (*Contest, error) {
	var out Contest
	_, err := c.call(ctx, request{method: http.MethodPost, path: path("contests", id, "refreeze"), kind: idempotent}, &out)
	return &out, err
}

// PutChallenge creates or replaces a challenge (admin).
func (c *Client) PutChallenge(ctx context.Context, contest, id string, spec ChallengeSpec) (ch *Challenge, created bool, err error) {
	var out Challenge
	m, err := c.call(ctx, request{method: http.MethodPut, path: path("contests", contest, "challenges", id), body: spec, kind: idempotent}, &out)
	return &out, m.Status == http.StatusCreated, err
}

// DeleteChallenge deletes a challenge nobody solved (admin; 409 once solved).
func (c *Client) DeleteChallenge(ctx context.Context, contest, id string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: path("contests", contest, "challenges", id), kind: idempotent}, nil)
	return err
}

// Challenges lists the challenges with their current values and solves.
func (c *Client) Challenges(ctx context.Context, contest string, view View) ([]Challenge, error) {
	var out struct {
		Challenges []Challenge `json:"challenges"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "challenges"), query: view.query()}, &out)
	return out.Challenges, err
}

// Attempt reports a judge's verdict (submit scope), with an
// Idempotency-Key reused by its retries: a repeated attempt is answered
// from the first and logged once.
func (c *Client) Attempt(ctx context.Context, contest, team, challenge string, correct bool, opts ...WriteOptions) (*AttemptResult, error) {
	var out AttemptResult
	body := struct {
		Team      string `json:"team"`
		Challenge string `json:"challenge"`
		Correct   bool   `json:"correct"`
	}{team, challenge, correct}
	m, err := c.call(ctx, request{method: http.MethodPost, path: path("contests", contest, "attempts"), body: body,
		kind: keyed, idem: writeKey(opts)}, &out)
	out.Replayed = m.Replayed
	return &out, err
}

// Attempts reads the audit log after id after (admin; limit 1-1000).
func (c *Client) Attempts(ctx context.Context, contest string, after int64, limit int) (*Attempts, error) {
	q := url.Values{}
	q.Set("after", strconv.FormatInt(after, 10))
	q.Set("limit", strconv.Itoa(limit))
	var out Attempts
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "attempts"), query: q}, &out)
	return &out, err
}

// StandingsOptions select a page of standings.
type StandingsOptions struct {
	View          View
	Offset, Limit int       // Limit 0: the server's default
	IncludeHidden bool      // live view
	At            time.Time // non-zero: the newest snapshot at or before it
}

// Standings reads the standings.
func (c *Client) Standings(ctx context.Context, contest string, o StandingsOptions) (*Standings, error) {
	q := o.View.query()
	if o.Offset > 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.IncludeHidden {
		q.Set("include_hidden", "true")
	}
	if !o.At.IsZero() {
		q.Set("at", o.At.UTC().Format(time.RFC3339Nano))
	}
	var out Standings
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "standings"), query: q}, &out)
	return &out, err
}

// Team reads one team's standing with its solves.
func (c *Client) Team(ctx context.Context, contest, team string, view View) (*TeamStanding, error) {
	var out TeamStanding
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "standings", team), query: view.query()}, &out)
	return &out, err
}

// FirstBloods lists the first bloods of every challenge.
func (c *Client) FirstBloods(ctx context.Context, contest string, view View) ([]Blood, error) {
	var out struct {
		FirstBloods []Blood `json:"first_bloods"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "first-bloods"), query: view.query()}, &out)
	return out.FirstBloods, err
}

// Snapshots lists the times of the stored standings snapshots.
func (c *Client) Snapshots(ctx context.Context, contest string) ([]time.Time, error) {
	var out struct {
		Snapshots []time.Time `json:"snapshots"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "snapshots")}, &out)
	return out.Snapshots, err
}

// Chart reads the score over time of the top teams (1-50; 0: 10).
func (c *Client) Chart(ctx context.Context, contest string, view View, top int) (*Chart, error) {
	q := view.query()
	if top > 0 {
		q.Set("top", strconv.Itoa(top))
	}
	var out Chart
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "chart"), query: q}, &out)
	return &out, err
}

// CTFtimeFeed reads the standings in CTFtime's format.
func (c *Client) CTFtimeFeed(ctx context.Context, contest string, view View) (*CTFtime, error) {
	var out CTFtime
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("contests", contest, "ctftime"), query: view.query()}, &out)
	return &out, err
}
