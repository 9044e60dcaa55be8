package podium

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Order says which way a sort key ranks.
type Order string

// Orders of a sort key.
const (
	Asc  Order = "asc"  // smaller is better (times, penalties)
	Desc Order = "desc" // larger is better (points, 3BV)
)

// Mode says how a new submission combines with a player's current entry.
type Mode string

// Board modes.
const (
	// Best keeps the better of the old and new entry, comparing whole key
	// tuples in board order. Never key by key.
	Best Mode = "best"
	// Latest replaces the entry with every submission.
	Latest Mode = "latest"
	// Sum adds the submitted keys to the stored ones.
	Sum Mode = "sum"
	// BestK keeps each player's best Keep results and ranks by the best
	// (results.go).
	BestK Mode = "best_k"
	// AggregateMode is the mode of an aggregate board: its entries are
	// computed from its sources (aggregate.go), never submitted.
	AggregateMode Mode = "aggregate"
)

// Every is a board's reset cadence.
type Every string

// Reset cadences. Week is the ISO week, starting Monday 00:00.
const (
	Never   Every = "none"
	Daily   Every = "day"
	Weekly  Every = "week"
	Monthly Every = "month"
)

// KeyDef names one sort key of a board.
type KeyDef struct {
	Name  string `json:"name"`
	Order Order  `json:"order"`
	// Label and Format say how pages show the key; they never change the
	// ranking, so editing them keeps a board's entries.
	Label  string    `json:"label,omitempty"`
	Format KeyFormat `json:"format,omitempty"`
	// Min and Max bound the values a submission may carry for this key
	// (bounds.go); nil: unbounded.
	Min *int64 `json:"min,omitempty"`
	Max *int64 `json:"max,omitempty"`
}

// KeyFormat says how a key's int64 values read to people. Empty leaves it
// to the pages, which guess from the key's name (a _ms or _s suffix).
type KeyFormat string

// Key formats.
const (
	FormatInteger    KeyFormat = "integer"     // 1234567 -> 1,234,567
	FormatDurationMS KeyFormat = "duration_ms" // milliseconds: 41234 -> 41.234 s
	FormatSeconds    KeyFormat = "seconds"     // a duration in seconds: 125 -> 2:05
	FormatPoints     KeyFormat = "points"      // points: 1234 -> 1,234 pts
	FormatTimestamp  KeyFormat = "timestamp"   // Unix seconds, shown as a local date and time
)

// MaxKeyLabelLen bounds a key's label, in bytes.
const MaxKeyLabelLen = 64

// Reset says when a board starts a new period, in which IANA zone.
type Reset struct {
	Every Every  `json:"every"`
	TZ    string `json:"tz"`
}

// Board is a ranking: named int64 keys, a mode, a reset cadence.
type Board struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Keys      []KeyDef        `json:"keys"`
	Mode      Mode            `json:"mode"`
	Reset     Reset           `json:"reset"`
	Public    bool            `json:"public"`
	Meta      json.RawMessage `json:"meta"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	// Gen tells a board from an earlier board with the same id (deleted
	// and made again), and from its own earlier definition when its keys,
	// mode or reset changed: state built under another Gen cannot be kept.
	// A SharedStore assigns it; other stores leave it 0.
	Gen uint64 `json:"-"`

	// Keep is the number of results a best_k board keeps per player.
	Keep int `json:"keep,omitempty"`
	// Aggregate defines an aggregate board (mode aggregate).
	Aggregate *Aggregate `json:"aggregate,omitempty"`
	// Tournament and points boards (tournament.go); nil on other boards.
	Tournament *Tournament `json:"tournament,omitempty"`
	Points     *Points     `json:"points,omitempty"`
	// League makes the board a league (league.go); nil on other boards.
	League *League `json:"league,omitempty"`
	// PlayerSubmit lets player sessions submit their own scores
	// (session.go).
	PlayerSubmit bool `json:"player_submit,omitempty"`
	// Review holds submissions for a moderator (review.go).
	Review *Review `json:"review,omitempty"`
	// Evidence sets the board's evidence limits, expiry and visibility
	// (evidence.go); nil: the defaults.
	Evidence *EvidencePolicy `json:"evidence,omitempty"`
	// Quota caps a player's submissions per period (quota.go); nil: none.
	Quota *Quota `json:"quota,omitempty"`
	// RankStyle "shared" adds rank_shared to the answers (rankstyle.go);
	// "" is the default, unique ranks only.
	RankStyle RankStyle `json:"rank_style,omitempty"`
	// KeepPeriods keeps that many past periods besides the current one
	// and deletes older ones (retention.go); 0 keeps every period.
	KeepPeriods int `json:"keep_periods,omitempty"`
	// PeriodsFrom is the oldest period the board may still have: those
	// before it expired under an earlier keep_periods and stay gone
	// (RetainedFloor). Set by the engine, never by a request.
	PeriodsFrom string `json:"-"`
	// GroupSet and GroupBoard make a board a set of groups or a ranking
	// of groups (group.go); nil on other boards.
	GroupSet   *GroupSet   `json:"group_set,omitempty"`
	GroupBoard *GroupBoard `json:"group_board,omitempty"`
}

var (
	boardIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,127}$`)
	keyNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)
)

// ValidBoardID reports whether id matches [a-z0-9][a-z0-9_.:-]{0,127}.
func ValidBoardID(id string) bool { return boardIDRe.MatchString(id) }

// Normalize fills defaults (mode best, reset none in UTC, empty meta) and
// validates b. It returns an ECodeInvalid error naming the first problem.
func (b *Board) Normalize() error {
	if !ValidBoardID(b.ID) {
		return Errorf(ECodeInvalid, "board id must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	if len(b.Title) > MaxTitleLen {
		return Errorf(ECodeInvalid, "title is longer than %d bytes", MaxTitleLen)
	}
	if err := validText("title", b.Title); err != nil {
		return err
	}
	if len(b.Keys) < 1 || len(b.Keys) > MaxKeys {
		return Errorf(ECodeInvalid, "keys must list 1 to %d keys", MaxKeys)
	}
	seen := make(map[string]bool, len(b.Keys))
	for i, k := range b.Keys {
		if !keyNameRe.MatchString(k.Name) {
			return Errorf(ECodeInvalid, "keys[%d].name must match [A-Za-z_][A-Za-z0-9_.-]{0,63}", i)
		}
		if seen[k.Name] {
			return Errorf(ECodeInvalid, "keys[%d].name %q is used twice", i, k.Name)
		}
		seen[k.Name] = true
		switch k.Order {
		case Asc, Desc:
		case "":
			return Errorf(ECodeInvalid, "keys[%d].order is required: asc or desc", i)
		default:
			return Errorf(ECodeInvalid, "keys[%d].order must be asc or desc", i)
		}
		if len(k.Label) > MaxKeyLabelLen {
			return Errorf(ECodeInvalid, "keys[%d].label is longer than %d bytes", i, MaxKeyLabelLen)
		}
		if err := validText(fmt.Sprintf("keys[%d].label", i), k.Label); err != nil {
			return err
		}
		switch k.Format {
		case "", FormatInteger, FormatDurationMS, FormatSeconds, FormatPoints, FormatTimestamp:
		default:
			return Errorf(ECodeInvalid, "keys[%d].format must be integer, duration_ms, seconds, points or timestamp", i)
		}
	}
	switch b.Mode {
	case "":
		b.Mode = Best
		if b.Aggregate != nil {
			b.Mode = AggregateMode
		}
		if b.GroupSet != nil || b.GroupBoard != nil { // group.go
			b.Mode = Latest
		}
	case Best, Latest, Sum, BestK, AggregateMode:
	default:
		return Errorf(ECodeInvalid, "mode must be best, best_k, latest, sum or aggregate")
	}
	if err := b.normalizeFormat(); err != nil { // aggregate.go
		return err
	}
	switch b.Reset.Every {
	case "":
		b.Reset.Every = Never
	case Never, Daily, Weekly, Monthly:
	default:
		return Errorf(ECodeInvalid, "reset.every must be none, day, week or month")
	}
	if b.Reset.TZ == "" {
		b.Reset.TZ = "UTC"
	}
	if _, err := LoadZone(b.Reset.TZ); err != nil {
		return err
	}
	meta, err := NormalizeMeta(b.Meta)
	if err != nil {
		return err
	}
	b.Meta = meta
	if b.Evidence != nil { // evidence.go
		if err := b.Evidence.Normalize(); err != nil {
			return err
		}
		if *b.Evidence == (EvidencePolicy{}) {
			b.Evidence = nil
		}
	}
	if err := b.normalizeLimits(); err != nil { // bounds.go, quota.go
		return err
	}
	if err := b.normalizeTournament(); err != nil { // tournament.go
		return err
	}
	if err := b.normalizeLeague(); err != nil { // league.go
		return err
	}
	if err := b.normalizeRankStyle(); err != nil { // rankstyle.go
		return err
	}
	if err := b.normalizeKeepPeriods(); err != nil { // retention.go
		return err
	}
	if err := b.normalizeGroup(); err != nil { // group.go
		return err
	}
	return b.normalizeReview() // review.go
}

// Orders returns the order of each key.
func (b *Board) Orders() []Order {
	o := make([]Order, len(b.Keys))
	for i, k := range b.Keys {
		o[i] = k.Order
	}
	return o
}

// SameCadence reports whether a and b cut time into the same periods: the
// same reset.every and, for a board that resets, the same zone. Changing
// the cadence of a board that has entries is a conflict: its stored periods
// would no longer be the ones its reads and writes name.
func (b *Board) SameCadence(o *Board) bool {
	if b.Reset.Every != o.Reset.Every {
		return false
	}
	return b.Reset.Every == Never || b.Reset.TZ == o.Reset.TZ
}

// SameRanking reports whether a and b rank entries the same way (keys and
// mode). Changing either on a board that has entries is a conflict.
func (b *Board) SameRanking(o *Board) bool {
	if b.Mode != o.Mode || b.Keep != o.Keep || len(b.Keys) != len(o.Keys) {
		return false
	}
	for i := range b.Keys { // a key's label, format and bounds do not rank
		if b.Keys[i].Name != o.Keys[i].Name || b.Keys[i].Order != o.Keys[i].Order {
			return false
		}
	}
	return true
}

// Better reports whether key tuple a ranks strictly ahead of b under orders,
// comparing the keys in turn. Equal tuples are not better.
func Better(orders []Order, a, b []int64) bool {
	return CompareKeys(orders, a, b) < 0
}

// CompareKeys compares two key tuples under orders: -1 when a ranks ahead of
// b, +1 when behind, 0 when equal on every key.
func CompareKeys(orders []Order, a, b []int64) int {
	for i, o := range orders {
		if a[i] == b[i] {
			continue
		}
		less := a[i] < b[i]
		if o == Desc {
			less = !less
		}
		if less {
			return -1
		}
		return 1
	}
	return 0
}

// NormalizeMeta checks that raw is absent, null or a JSON object of at most
// MaxMetaLen bytes, and returns it compacted ("{}" when absent).
func NormalizeMeta(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if len(raw) > MaxMetaLen {
		return nil, Errorf(ECodeInvalid, "meta is larger than %d bytes", MaxMetaLen)
	}
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	if i == len(raw) || raw[i] != '{' {
		return nil, Errorf(ECodeInvalid, "meta must be a JSON object")
	}
	var buf = make([]byte, 0, len(raw))
	out, err := compactJSON(buf, raw)
	if err != nil {
		return nil, Errorf(ECodeInvalid, "meta is not valid JSON")
	}
	return out, nil
}

// CompareRank is podium's ordering rule, its one definition: the keys
// compared in turn under orders, then the earlier at (unix milliseconds:
// whoever reached the value first), then the smaller seq (the earlier
// accepted submission). seq is unique per board, so the order is total. It
// returns -1 when a ranks ahead of b, 1 when behind, 0 when equal. The rank
// index encodes the same order in its rows; its tests and podium check
// compare that encoding against this function.
func CompareRank(orders []Order, aKeys []int64, aAt int64, aSeq uint64, bKeys []int64, bAt int64, bSeq uint64) int {
	if c := CompareKeys(orders, aKeys, bKeys); c != 0 {
		return c
	}
	switch {
	case aAt < bAt:
		return -1
	case aAt > bAt:
		return 1
	case aSeq < bSeq:
		return -1
	case aSeq > bSeq:
		return 1
	}
	return 0
}
