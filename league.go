package podium

import (
	"context"
	"regexp"
	"time"
)

// Leagues (issue 21). A league is a board with a "league" part: the board
// gives the cadence (its reset: every period is a season), the ranking keys
// and the mode; the part gives the ordered tiers, the cohort size and the
// promotion and relegation counts. A player's first accepted score of a
// period places them in a cohort of their tier (the lowest for a new
// player); at each period end the server settles the period once in the
// cluster: ranks within each cohort promote, keep or relegate, and the new
// tiers count from the next period. The module is package league; the
// design is in docs/ARCHITECTURE.md, "Leagues".

// League error codes (the http package maps them to statuses).
const (
	// ECodeLeagueSettling: a first score of a period while an earlier
	// period of the league is not settled yet (503, Retry-After): the
	// player's tier for the new period is not known until it is.
	ECodeLeagueSettling = "league_settling"
)

// Limits of leagues.
const (
	MaxLeagueTiers     = 16
	MaxCohortSize      = 1000
	MaxLeagueTierName  = 32
	DefaultCohortSize  = 30
	LeagueAbsentKeep   = "keep" // a player who did not play keeps their tier
	LeagueAbsentDrop   = "drop" // ... or drops one
	LeagueHistoryLimit = 100    // periods a history read returns at most
	LeagueCohortsLimit = 1000   // cohorts a page of a tier lists at most
	MaxLeagueList      = 1000   // leagues GET /v1/leagues lists at most
	MaxCohortIndex     = 10_000_000
)

// League is the league part of a board definition.
type League struct {
	// Tiers, lowest first (new players start in Tiers[0]).
	Tiers []LeagueTier `json:"tiers"`
	// CohortSize is the most players a cohort holds (0: 30).
	CohortSize int `json:"cohort_size"`
	// Absent is what settlement does to a player with a tier who did not
	// play in the period: "keep" (default) or "drop" one tier.
	Absent string `json:"absent,omitempty"`
}

// LeagueTier is one tier: how many of each cohort's best move up, and how
// many of its last move down, at settlement, as counts or as percentages
// of the cohort's members (rounded down; a tier gives one or the other for
// each). The top tier promotes no one and the lowest relegates no one.
type LeagueTier struct {
	Name        string `json:"name"`
	Promote     int    `json:"promote"`
	Relegate    int    `json:"relegate"`
	PromotePct  int    `json:"promote_pct,omitempty"`
	RelegatePct int    `json:"relegate_pct,omitempty"`
}

// Moves returns how many of a cohort of n members tier t promotes and
// relegates.
func (t *LeagueTier) Moves(n int) (promote, relegate int) {
	promote, relegate = t.Promote, t.Relegate
	if t.PromotePct > 0 {
		promote = n * t.PromotePct / 100
	}
	if t.RelegatePct > 0 {
		relegate = n * t.RelegatePct / 100
	}
	return promote, relegate
}

// normalizeLeague validates the league part of a board and fills its
// defaults.
func (b *Board) normalizeLeague() error {
	l := b.League
	if l == nil {
		return nil
	}
	if b.Tournament != nil || b.Points != nil || b.Aggregate != nil || b.GroupSet != nil || b.GroupBoard != nil {
		return Errorf(ECodeInvalid, "a league board cannot also be a tournament, points, aggregate, group set or group board")
	}
	if b.Reset.Every == Never || b.Reset.Every == "" {
		return Errorf(ECodeInvalid, "a league board must reset (reset.every day, week or month): each period is a season")
	}
	if len(l.Tiers) < 1 || len(l.Tiers) > MaxLeagueTiers {
		return Errorf(ECodeInvalid, "league.tiers must list 1 to %d tiers, lowest first", MaxLeagueTiers)
	}
	if l.CohortSize == 0 {
		l.CohortSize = DefaultCohortSize
	}
	if l.CohortSize < 2 || l.CohortSize > MaxCohortSize {
		return Errorf(ECodeInvalid, "league.cohort_size must be 2 to %d", MaxCohortSize)
	}
	switch l.Absent {
	case "":
		l.Absent = LeagueAbsentKeep
	case LeagueAbsentKeep, LeagueAbsentDrop:
	default:
		return Errorf(ECodeInvalid, `league.absent must be "keep" or "drop"`)
	}
	seen := map[string]bool{}
	for i := range l.Tiers {
		t := &l.Tiers[i]
		if !validTierName(t.Name) {
			return Errorf(ECodeInvalid, "league.tiers[%d].name must be 1 to %d of a-z, 0-9, _ and -", i, MaxLeagueTierName)
		}
		if seen[t.Name] {
			return Errorf(ECodeInvalid, "league.tiers[%d].name %q is listed twice", i, t.Name)
		}
		seen[t.Name] = true
		if t.Promote < 0 || t.Relegate < 0 || t.Promote+t.Relegate > l.CohortSize {
			return Errorf(ECodeInvalid, "league.tiers[%d]: promote and relegate must be 0 or more and add up to at most cohort_size", i)
		}
		if t.PromotePct < 0 || t.RelegatePct < 0 || t.PromotePct+t.RelegatePct > 100 {
			return Errorf(ECodeInvalid, "league.tiers[%d]: promote_pct and relegate_pct must be 0 or more and add up to at most 100", i)
		}
		if t.PromotePct > 0 && t.Promote > 0 || t.RelegatePct > 0 && t.Relegate > 0 {
			return Errorf(ECodeInvalid, "league.tiers[%d]: give promote or promote_pct, relegate or relegate_pct, not both", i)
		}
		if i == len(l.Tiers)-1 && (t.Promote != 0 || t.PromotePct != 0) {
			return Errorf(ECodeInvalid, "league.tiers[%d]: the top tier promotes no one (promote 0)", i)
		}
		if i == 0 && (t.Relegate != 0 || t.RelegatePct != 0) {
			return Errorf(ECodeInvalid, "league.tiers[0]: the lowest tier relegates no one (relegate 0)")
		}
	}
	return nil
}

var tierNameRe = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

func validTierName(s string) bool { return tierNameRe.MatchString(s) }

// Clone returns a deep copy of l (nil for nil).
func (l *League) Clone() *League {
	if l == nil {
		return nil
	}
	c := *l
	c.Tiers = append([]LeagueTier(nil), l.Tiers...)
	return &c
}

// SameShape reports whether l and o place and settle players the same way
// (tiers and cohort size): changing them while a league has members would
// move players between cohorts that already exist.
func (l *League) SameShape(o *League) bool {
	if (l == nil) != (o == nil) {
		return false
	}
	if l == nil {
		return true
	}
	if l.CohortSize != o.CohortSize || len(l.Tiers) != len(o.Tiers) {
		return false
	}
	for i := range l.Tiers {
		if l.Tiers[i].Name != o.Tiers[i].Name {
			return false
		}
	}
	return true
}

// Zone is where a rank in a cohort of n players falls in tier t (0-based
// tier index of a league with tiers tiers): promotion, safe or relegation.
// Promotion wins where the zones overlap in a short cohort.
func (l *League) Zone(tier int, rank, n int) string {
	promote, relegate := l.Tiers[tier].Moves(n)
	if tier < len(l.Tiers)-1 && rank <= promote {
		return ZonePromotion
	}
	if tier > 0 && rank > n-relegate {
		return ZoneRelegation
	}
	return ZoneSafe
}

// Zones and outcomes.
const (
	ZonePromotion  = "promotion"
	ZoneSafe       = "safe"
	ZoneRelegation = "relegation"

	OutcomePromoted  = "promoted"
	OutcomeStayed    = "stayed"
	OutcomeRelegated = "relegated"
	OutcomeAbsent    = "absent" // did not play: kept or dropped a tier (Absent)
)

// LeagueMember is a player's place in a league for one period: the tier
// they played in and their cohort in it. Seq numbers the placements of a
// (league, period) from 1 in the order they were made; the placements of
// one tier, in Seq order, fill cohort 0 first, then 1, and so on.
type LeagueMember struct {
	Board  string
	Period string
	Player string
	Tier   int
	Cohort int
	Seq    int64
	At     time.Time
}

// LeagueResult is a settled player's outcome for one period.
type LeagueResult struct {
	Board   string
	Period  string
	Player  string
	Tier    int // the tier played in
	Cohort  int // -1: absent
	Rank    int // in the cohort; 0: absent
	Outcome string
	NewTier int // the tier for the next period
}

// LeaguePeriod is a period of a league in which players were placed, and
// its settlement once settled.
type LeaguePeriod struct {
	Board     string
	Period    string
	Start     time.Time
	SettledAt time.Time // zero: not settled
	Players   int64     // results written
	Promoted  int64
	Relegated int64
	Epoch     int64  // the settlement lease's epoch
	Holder    string // the node that settled it
}

// Settled reports whether the period is settled.
func (p *LeaguePeriod) Settled() bool { return !p.SettledAt.IsZero() }

// LeagueTierOf is a player's tier as of the last settlement that moved it.
type LeagueTierOf struct {
	Player string
	Tier   int
}

// CohortCount is a cohort of a tier and its members.
type CohortCount struct {
	Cohort  int
	Members int
}

// LeagueBatch is the league part of a Batch: placements (with the period
// each opens), or a settlement (fenced, alone).
type LeagueBatch struct {
	Periods []LeaguePeriod // inserted if absent; a settled one is upserted
	Members []LeagueMember
	Results []LeagueResult
	Tiers   []LeagueTierOf // upserted per (board, player)
	Board   string         // the league of Tiers
	Fence   *Fence
}

// Len is the number of rows.
func (b *LeagueBatch) Len() int {
	if b == nil {
		return 0
	}
	n := len(b.Periods) + len(b.Members) + len(b.Results) + len(b.Tiers)
	if b.Fence != nil {
		n++
	}
	return n
}

// LeagueStore is the optional Store ability that leagues need; both
// sqlite.Store and postgres.Store have it, and storetest covers it. Rows are
// written by Commit as a part of the Batch (LeaguePart), a fencing part
// (its fence is checked before anything is written); the settlement lease
// is TourneyStore's AcquireLease under its own name. DeleteBoard removes a
// league's rows.
type LeagueStore interface {
	LeaguePart(b *LeagueBatch) Part
	// LeagueMembers returns the placements of a period with Seq above
	// after, by Seq.
	LeagueMembers(ctx context.Context, board, period string, after int64) ([]LeagueMember, error)
	// LeagueCohort returns the members of one cohort, by Seq.
	LeagueCohort(ctx context.Context, board, period string, tier, cohort int) ([]LeagueMember, error)
	// LeagueMember returns one player's placement in a period.
	LeagueMember(ctx context.Context, board, period, player string) (LeagueMember, bool, error)
	// LeagueCohorts counts the members of a tier's cohorts in a period, by
	// cohort, from offset, at most limit.
	LeagueCohorts(ctx context.Context, board, period string, tier, offset, limit int) ([]CohortCount, error)
	// LeagueTierCounts returns the number of members of each tier in a
	// period, indexed by tier (tiers past the last with members are left
	// out).
	LeagueTierCounts(ctx context.Context, board, period string) ([]int64, error)
	// LeagueTiers returns every player whose tier a settlement set.
	LeagueTiers(ctx context.Context, board string) ([]LeagueTierOf, error)
	// LeagueTiersPage returns at most limit of LeagueTiers' rows, those
	// of players after the player after (byte order), by player.
	LeagueTiersPage(ctx context.Context, board, after string, limit int) ([]LeagueTierOf, error)
	// LeaguePlayerTier returns one player's tier (false: never set: the
	// lowest).
	LeaguePlayerTier(ctx context.Context, board, player string) (int, bool, error)
	// LeaguePeriods returns the periods of a league with placements, by
	// start.
	LeaguePeriods(ctx context.Context, board string) ([]LeaguePeriod, error)
	// LeagueResults returns the results of a period, by player.
	LeagueResults(ctx context.Context, board, period string) ([]LeagueResult, error)
	// LeagueResultsPage returns at most limit of LeagueResults' rows,
	// those of players after the player after (byte order), by player.
	LeagueResultsPage(ctx context.Context, board, period, after string, limit int) ([]LeagueResult, error)
	// LeagueHistory returns a player's results, newest first, at most
	// limit.
	LeagueHistory(ctx context.Context, board, player string, limit int) ([]LeagueResult, error)
}
