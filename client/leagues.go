package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// League is a board's league part (docs/API.md, Leagues): tiers lowest
// first, the cohort size and what an absent player keeps.
type League struct {
	Tiers      []LeagueTier `json:"tiers"`
	CohortSize int          `json:"cohort_size,omitempty"` // 2-1000; 0: the server's default (30)
	Absent     string       `json:"absent,omitempty"`      // keep (default) or drop
}

// LeagueTier is one tier: how many of each cohort's best move up and of
// its last move down, as counts or as percentages (not both).
type LeagueTier struct {
	Name        string `json:"name"`
	Promote     int    `json:"promote,omitempty"`
	Relegate    int    `json:"relegate,omitempty"`
	PromotePct  int    `json:"promote_pct,omitempty"`
	RelegatePct int    `json:"relegate_pct,omitempty"`
}

// LeagueInfo is where a league stands (GetLeague; ListLeagues fills
// Board, Title, Period and League).
type LeagueInfo struct {
	Board     string     `json:"board"`
	Title     string     `json:"title,omitempty"`
	League    League     `json:"league"`
	Period    string     `json:"period"`
	PeriodEnd *time.Time `json:"period_end,omitempty"`
	Tiers     []struct {
		Tier     string `json:"tier"`
		Promote  int    `json:"promote"`
		Relegate int    `json:"relegate"`
		Members  int    `json:"members"`
		Cohorts  int    `json:"cohorts"`
	} `json:"tiers,omitempty"`
	Periods []struct {
		Period     string            `json:"period"`
		Start      time.Time         `json:"start"`
		Settlement *LeagueSettlement `json:"settlement"`
	} `json:"periods,omitempty"`
}

// LeagueSettlement summarises the settlement of one period.
type LeagueSettlement struct {
	SettledAt time.Time `json:"settled_at"`
	Players   int       `json:"players"`
	Promoted  int       `json:"promoted"`
	Relegated int       `json:"relegated"`
	Epoch     uint64    `json:"epoch"`
	Node      string    `json:"node"`
}

// LeagueStanding is a player's tier and cohort in a period; Cohort is nil
// while the player has not played it (Tier is then the one their first
// score will place them in).
type LeagueStanding struct {
	Player    string `json:"player"`
	Board     string `json:"board"`
	Period    string `json:"period"`
	Placed    bool   `json:"placed"`
	Tier      string `json:"tier"`
	TierIndex int    `json:"tier_index"`
	Cohort    *int   `json:"cohort"`
}

// Cohort is one cohort ranked, with zones (promotion, safe, relegation).
type Cohort struct {
	Player  string        `json:"player,omitempty"` // in PlayerCohort
	Board   string        `json:"board"`
	Period  string        `json:"period"`
	Tier    string        `json:"tier"`
	Cohort  int           `json:"cohort"`
	Size    int           `json:"size"`
	Entries []CohortEntry `json:"entries"`
}

// CohortEntry is a member of a cohort; Keys and BoardRank are nil for a
// member without a visible entry.
type CohortEntry struct {
	Rank      int     `json:"rank"`
	Zone      string  `json:"zone"`
	Player    string  `json:"player"`
	Name      string  `json:"name"`
	Keys      []int64 `json:"keys"`
	BoardRank *int    `json:"board_rank"`
}

// LeagueHistory is a player's tier per period, newest first.
type LeagueHistory struct {
	Player  string `json:"player"`
	Board   string `json:"board"`
	Periods []struct {
		Period   string `json:"period"`
		Tier     string `json:"tier"`
		Cohort   *int   `json:"cohort"`
		Settled  bool   `json:"settled"`
		Rank     *int   `json:"rank,omitempty"`
		Outcome  string `json:"outcome,omitempty"` // promoted, stayed, relegated, absent
		NextTier string `json:"next_tier,omitempty"`
	} `json:"periods"`
}

// Cohorts is a page of a tier's cohorts.
type Cohorts struct {
	Board   string `json:"board"`
	Period  string `json:"period"`
	Tier    string `json:"tier"`
	Total   int    `json:"total"`
	Cohorts []struct {
		Cohort  int `json:"cohort"`
		Members int `json:"members"`
	} `json:"cohorts"`
}

// LeagueSettled is the answer of SettleLeague: the periods settled now
// (Already: another run had settled it).
type LeagueSettled struct {
	Board   string `json:"board"`
	Settled []struct {
		Period    string `json:"period"`
		Already   bool   `json:"already"`
		Players   int    `json:"players"`
		Promoted  int    `json:"promoted"`
		Relegated int    `json:"relegated"`
		Dropped   int    `json:"dropped"`
		Epoch     uint64 `json:"epoch"`
	} `json:"settled"`
}

func periodQuery(period string) url.Values {
	q := url.Values{}
	if period != "" {
		q.Set("period", period)
	}
	return q
}

// Leagues is the league part of the API (docs/API.md, Leagues), from
// Client.Leagues.
type Leagues struct{ c *Client }

// Leagues returns the league methods.
func (c *Client) Leagues() Leagues { return Leagues{c} }

// List lists the leagues the caller may read.
func (l Leagues) List(ctx context.Context) ([]LeagueInfo, error) {
	var out struct {
		Leagues []LeagueInfo `json:"leagues"`
	}
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues")}, &out)
	return out.Leagues, err
}

// Get reads a league's definition, its current tiers and its latest
// periods with their settlements.
func (l Leagues) Get(ctx context.Context, board string) (*LeagueInfo, error) {
	var out LeagueInfo
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board)}, &out)
	return &out, err
}

// Standing reads a player's tier and cohort in a period ("":
// current).
func (l Leagues) Standing(ctx context.Context, board, player, period string) (*LeagueStanding, error) {
	var out LeagueStanding
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board, "players", player), query: periodQuery(period)}, &out)
	return &out, err
}

// PlayerCohort reads the player's cohort in a period ("": current),
// ranked with zones (404 while the player has not played it).
func (l Leagues) PlayerCohort(ctx context.Context, board, player, period string) (*Cohort, error) {
	var out Cohort
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board, "players", player, "cohort"), query: periodQuery(period)}, &out)
	return &out, err
}

// History reads a player's tier per period, newest first.
func (l Leagues) History(ctx context.Context, board, player string) (*LeagueHistory, error) {
	var out LeagueHistory
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board, "players", player, "history")}, &out)
	return &out, err
}

// TierCohorts reads a page of a tier's cohorts (limit 1-1000) in a period
// ("": current).
func (l Leagues) TierCohorts(ctx context.Context, board, tier, period string, offset, limit int) (*Cohorts, error) {
	q := pageQuery(offset, limit)
	if period != "" {
		q.Set("period", period)
	}
	var out Cohorts
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board, "tiers", tier, "cohorts"), query: q}, &out)
	return &out, err
}

// Cohort reads one cohort of a tier, ranked with zones.
func (l Leagues) Cohort(ctx context.Context, board, tier string, cohort int, period string) (*Cohort, error) {
	var out Cohort
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board, "tiers", tier, "cohorts", strconv.Itoa(cohort)), query: periodQuery(period)}, &out)
	return &out, err
}

// Settle settles the league's ended periods that are not settled
// yet (admin); a settled period is never settled again.
func (l Leagues) Settle(ctx context.Context, board string) (*LeagueSettled, error) {
	var out LeagueSettled
	_, err := l.c.call(ctx, request{method: http.MethodPost, path: path("leagues", board, "settle"), kind: idempotent}, &out)
	return &out, err
}
