package client

import (
	"encoding/json"
	"time"
)

// RankKey is one ranking key of a board: a named value of every
// submission, compared in Order. A board ranks by its keys in turn (the
// second breaks ties of the first). Not to be confused with an API key
// (APIKey, APIKeySpec).
type RankKey struct {
	Name   string `json:"name"`
	Order  string `json:"order"`            // "asc" or "desc"
	Label  string `json:"label,omitempty"`  // what pages call it
	Format string `json:"format,omitempty"` // integer, duration_ms, seconds, points, timestamp
	// Min and Max bound the values a submission may carry (nil: none).
	Min *int64 `json:"min,omitempty"`
	Max *int64 `json:"max,omitempty"`
}

// KeyDef is the former name of RankKey.
//
// Deprecated: use RankKey; KeyDef stays so that code written against it
// compiles.
type KeyDef = RankKey

// Int64 returns a pointer to v, for the optional bounds of a RankKey.
func Int64(v int64) *int64 { return &v }

// Quota caps each player's accepted submissions per period (per day on a
// board that never resets).
type Quota struct {
	Max int `json:"max"`
}

// EvidencePolicy is a board's evidence limits, expiry and visibility; zero
// fields take the server's defaults.
type EvidencePolicy struct {
	MaxBytes         int64 `json:"max_bytes,omitempty"`
	MaxInflatedBytes int64 `json:"max_inflated_bytes,omitempty"`
	MaxEvents        int   `json:"max_events,omitempty"`
	MaxLineBytes     int   `json:"max_line_bytes,omitempty"`
	TTLSeconds       int64 `json:"ttl_seconds,omitempty"`
	RetentionSeconds int64 `json:"retention_seconds,omitempty"`
	Public           bool  `json:"public,omitempty"`
}

// ReviewPolicy says which submissions a board holds for review: Hold is
// all, top (those that would enter the top Top), threshold (those better
// than Threshold), or none to remove the setting.
type ReviewPolicy struct {
	Hold      string  `json:"hold"`
	Top       int     `json:"top,omitempty"`
	Threshold []int64 `json:"threshold,omitempty"`
}

// Reset is a board's reset cadence.
type Reset struct {
	Every string `json:"every"`        // none, day, week, month
	TZ    string `json:"tz,omitempty"` // IANA zone; default UTC
}

// AggregateSource is one source board of an aggregate board.
type AggregateSource struct {
	Board string  `json:"board"`
	K     int     `json:"k,omitempty"`
	Fill  []int64 `json:"fill,omitempty"`
}

// Aggregate defines an aggregate board's entries from other boards.
type Aggregate struct {
	Kind       string            `json:"kind"` // sum_of_bests, best_k_sum
	Sources    []AggregateSource `json:"sources"`
	RequireAll bool              `json:"require_all,omitempty"`
}

// Tournament is a board's tournament settings.
type Tournament struct {
	Start           time.Time `json:"start"`
	End             time.Time `json:"end"`
	JoinRequired    bool      `json:"join_required,omitempty"`
	MaxParticipants int       `json:"max_participants,omitempty"`
	Weight          int64     `json:"weight,omitempty"`
	Category        string    `json:"category,omitempty"`
	Series          string    `json:"series,omitempty"`
	Ladder          string    `json:"ladder,omitempty"`
}

// Points makes a board a points board of a ladder.
type Points struct {
	Ladder       string `json:"ladder"`
	Kind         string `json:"kind"` // total, category, current, best
	Category     string `json:"category,omitempty"`
	Series       string `json:"series,omitempty"`
	By           string `json:"by,omitempty"`
	HalfLifeDays int    `json:"half_life_days,omitempty"`
}

// BoardSpec is the body of PutBoard. An update keeps what the spec leaves
// out (zero values and nil pointers); a new board needs Keys.
type BoardSpec struct {
	Title        string          `json:"title,omitempty"`
	Keys         []RankKey       `json:"keys,omitempty"`
	Mode         string          `json:"mode,omitempty"` // best, latest, sum, best_k, aggregate
	Reset        *Reset          `json:"reset,omitempty"`
	Public       *bool           `json:"public,omitempty"`
	Meta         json.RawMessage `json:"meta,omitempty"`
	Keep         int             `json:"keep,omitempty"` // best_k
	Aggregate    *Aggregate      `json:"aggregate,omitempty"`
	Tournament   *Tournament     `json:"tournament,omitempty"`
	Points       *Points         `json:"points,omitempty"`
	PlayerSubmit *bool           `json:"player_submit,omitempty"`
	Quota        *Quota          `json:"quota,omitempty"`    // {"max": 0} removes it
	Evidence     *EvidencePolicy `json:"evidence,omitempty"` // replaced as a whole
	Review       *ReviewPolicy   `json:"review,omitempty"`
	RankStyle    string          `json:"rank_style,omitempty"`   // unique (default) or shared: adds RankShared
	KeepPeriods  int             `json:"keep_periods,omitempty"` // past periods kept besides the current one; 0: every period
	League       *League         `json:"league,omitempty"`       // leagues.go
	GroupSet     *GroupSet       `json:"group_set,omitempty"`    // groups.go
	GroupBoard   *GroupBoard     `json:"group_board,omitempty"`
}

// Bool returns a pointer to v, for the optional booleans of specs.
func Bool(v bool) *bool { return &v }

// Board is a board as the server answers it.
type Board struct {
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Keys         []RankKey       `json:"keys"`
	Mode         string          `json:"mode"`
	Reset        Reset           `json:"reset"`
	Public       bool            `json:"public"`
	Meta         json.RawMessage `json:"meta"`
	Keep         int             `json:"keep,omitempty"`
	Aggregate    *Aggregate      `json:"aggregate,omitempty"`
	Tournament   *Tournament     `json:"tournament,omitempty"`
	Points       *Points         `json:"points,omitempty"`
	PlayerSubmit bool            `json:"player_submit,omitempty"`
	Quota        *Quota          `json:"quota,omitempty"`
	Evidence     *EvidencePolicy `json:"evidence,omitempty"`
	Review       *ReviewPolicy   `json:"review,omitempty"`
	RankStyle    string          `json:"rank_style,omitempty"`   // "shared", or empty: unique
	KeepPeriods  int             `json:"keep_periods,omitempty"` // 0: keeps every period
	League       *League         `json:"league,omitempty"`
	GroupSet     *GroupSet       `json:"group_set,omitempty"`
	GroupBoard   *GroupBoard     `json:"group_board,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	Period       string          `json:"period"`
	NextReset    *time.Time      `json:"next_reset"`
	Seq          uint64          `json:"seq"`
}

// Result is one kept result of a best_k board's entry.
type Result struct {
	Keys []int64   `json:"keys"`
	At   time.Time `json:"at"`
}

// Entry is a ranked entry.
type Entry struct {
	Rank    int             `json:"rank"`
	Player  string          `json:"player"`
	Name    string          `json:"name"`
	Keys    []int64         `json:"keys"`
	At      time.Time       `json:"at"`
	Meta    json.RawMessage `json:"meta"`
	Hidden  bool            `json:"hidden,omitempty"`
	Results []Result        `json:"results,omitempty"` // best_k boards
	Value   json.Number     `json:"value,omitempty"`   // current points boards
	// Percentile is the share of the ranked entries strictly behind, in
	// percent, rounded down to 2 decimals (REST reads; a watch sets it on
	// State.Entries from Rank and Total, as events do not carry it).
	Percentile float64 `json:"percentile,omitempty"`
	// RankShared is the standard competition rank (1, 2, 2, 4) on a board
	// with rank_style shared (REST reads and stream events); 0 otherwise.
	RankShared int `json:"rank_shared,omitempty"`
}

// Percentile returns the share of total ranked entries strictly behind
// the one at rank, in percent rounded down to 2 decimals: the percentile
// REST reads carry, floor(10000 * (total - rank) / total) / 100. It is 0
// when rank is not in 1..total.
func Percentile(rank, total int) float64 {
	if total < 1 || rank < 1 || rank > total {
		return 0
	}
	return float64(10000*int64(total-rank)/int64(total)) / 100
}

// Page is a list of entries: a top page, some players, or the entries
// around one.
type Page struct {
	Board   string  `json:"board"`
	Period  string  `json:"period"`
	Seq     uint64  `json:"seq"`
	Total   int     `json:"total"`
	Entries []Entry `json:"entries"`
	// TopPercent and TopCount answer TopPercent: the entries in the top
	// TopPercent percent, which the page never goes past.
	TopPercent float64 `json:"top_percent,omitempty"`
	TopCount   int     `json:"top_count,omitempty"`
}

// PlayerEntry is one player's entry (GET .../entries/{player}).
type PlayerEntry struct {
	Board  string `json:"board"`
	Period string `json:"period"`
	Seq    uint64 `json:"seq"`
	Total  int    `json:"total"`
	Entry  Entry  `json:"entry"`
}

// Score is one submission. Keys, or Score for a one-key board.
type Score struct {
	Board  string          `json:"board,omitempty"` // batches only
	Player string          `json:"player"`
	Keys   []int64         `json:"keys,omitempty"`
	Score  *int64          `json:"score,omitempty"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

// Submitted is the answer to a submission.
type Submitted struct {
	Board         string         `json:"board"`
	Period        string         `json:"period"`
	Player        string         `json:"player"`
	Improved      bool           `json:"improved"`
	Seq           uint64         `json:"seq"`
	Entry         SubmittedEntry `json:"entry"`
	Previous      *Previous      `json:"previous"`
	Reconstructed bool           `json:"reconstructed,omitempty"`
	// Status is "pending" when the board held the submission for review
	// (HTTP 202): it is not ranked until a moderator approves it, ID names
	// its review item and HoldReason says why it was held.
	Status     string `json:"status,omitempty"`
	ID         string `json:"id,omitempty"`
	HoldReason string `json:"reason,omitempty"`
	// EvidenceURL is where a held submission's evidence goes (PUT, with
	// the hashes: UploadReviewEvidence does it).
	EvidenceURL string `json:"evidence_url,omitempty"`
	// Replayed is true when the server answered a retry from the first
	// attempt (Idempotent-Replayed), which the client sets from the header.
	Replayed bool `json:"-"`
}

// SubmittedEntry is the entry a submission left.
type SubmittedEntry struct {
	Rank    int             `json:"rank"`
	Keys    []int64         `json:"keys"`
	At      time.Time       `json:"at"`
	Seq     uint64          `json:"seq"`
	Meta    json.RawMessage `json:"meta"`
	Results []Result        `json:"results,omitempty"`
	// Percentile and RankShared as in Entry, counted as the submission
	// left the board.
	Percentile float64 `json:"percentile,omitempty"`
	RankShared int     `json:"rank_shared,omitempty"`
}

// Previous is the entry a submission replaced.
type Previous struct {
	Rank int       `json:"rank"`
	Keys []int64   `json:"keys"`
	At   time.Time `json:"at"`
	// Percentile and RankShared as in Entry, as the board was before.
	Percentile float64 `json:"percentile,omitempty"`
	RankShared int     `json:"rank_shared,omitempty"`
}

// BatchResult is one item of a batch answer: the submission's answer, or
// its own error (the other items are applied regardless).
type BatchResult struct {
	Submitted
	Error *ItemError `json:"error,omitempty"`
}

// ItemError is the error of one batch item.
type ItemError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *ItemError) Error() string { return "podium: " + e.Code + ": " + e.Message }

// Periods lists a board's periods that have entries, newest first.
type Periods struct {
	Board   string `json:"board"`
	Current string `json:"current"`
	Periods []struct {
		ID      string `json:"id"`
		Entries int    `json:"entries"`
	} `json:"periods"`
}

// Player is a player's record.
type Player struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Hidden    bool            `json:"hidden"`
	Meta      json.RawMessage `json:"meta"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// PlayerSpec is the body of PutPlayer.
type PlayerSpec struct {
	Name   string          `json:"name,omitempty"`
	Hidden bool            `json:"hidden"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

// APIKeySpec is the body of CreateKey: an API key's name, what it may do
// and on which boards. Not to be confused with a board's ranking keys
// (RankKey).
type APIKeySpec struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`           // read, submit, admin, sessions
	Boards []string `json:"boards,omitempty"` // board-id prefixes
}

// KeySpec is the former name of APIKeySpec.
//
// Deprecated: use APIKeySpec; KeySpec stays so that code written against
// it compiles.
type KeySpec = APIKeySpec

// APIKey is an API key; Key, its secret, is set only in CreateKey's answer.
type APIKey struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Scopes    []string  `json:"scopes"`
	Boards    []string  `json:"boards"`
	CreatedAt time.Time `json:"created_at"`
	Key       string    `json:"key,omitempty"`
}

// Difference is one thing a check found wrong.
type Difference struct {
	Board  string `json:"board"`
	Period string `json:"period"`
	Player string `json:"player"`
	Want   string `json:"want"`
	Got    string `json:"got"`
}

// CheckReport is the answer of Check.
type CheckReport struct {
	OK                    bool              `json:"ok"`
	Differences           []Difference      `json:"differences"`
	LogDifferences        []Difference      `json:"log_differences"`
	QuickCheck            []string          `json:"quick_check"`
	SettlementDifferences []json.RawMessage `json:"settlement_differences"`
}

// ReloadReport is the answer of Reload.
type ReloadReport struct {
	OK                  bool     `json:"ok"`
	SettlementsRepaired []string `json:"settlements_repaired"`
}

// Session is a player session; Token is set only when it was issued or
// refreshed.
type Session struct {
	ID          string    `json:"id"`
	Player      string    `json:"player"`
	Device      string    `json:"device"`
	CreatedAt   time.Time `json:"created_at"`
	RefreshedAt time.Time `json:"refreshed_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	Token       string    `json:"token,omitempty"`
}

// SessionSpec is the body of IssueSession.
type SessionSpec struct {
	Device     string `json:"device"`
	TTLSeconds int64  `json:"ttl_seconds,omitempty"` // 0: the server's default
}

// FeedEvent is one event of the activity feed.
type FeedEvent struct {
	ID             string          `json:"id"`
	Kind           string          `json:"kind"` // personal_best, new_leader, tournament_settled
	Board          string          `json:"board"`
	Title          string          `json:"title"`
	Period         string          `json:"period"`
	Seq            uint64          `json:"seq"`
	At             time.Time       `json:"at"`
	Player         *string         `json:"player"`
	Name           *string         `json:"name"`
	Keys           []int64         `json:"keys"`
	Old            []int64         `json:"old,omitempty"`
	PreviousPlayer *string         `json:"previous_player,omitempty"`
	PreviousName   *string         `json:"previous_name,omitempty"`
	Data           json.RawMessage `json:"data,omitempty"`
}

// Feed is the answer of Feed.
type Feed struct {
	Board  *string     `json:"board"`
	Limit  int         `json:"limit"`
	Events []FeedEvent `json:"events"`
}
