package podium

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The activity feed: notable events on boards (a new personal best, a new
// #1, a settled tournament), stored in the database of record in the same
// transaction as the write that caused them, capped per board and read
// newest first. Events carry domain names only (board, period, player,
// keys, times, seqs), so every node that reads the database serves the
// same feed with the same ids.

// FeedKind says what a feed event records.
type FeedKind uint8

// Kinds of feed events. The number is stored and orders the events of
// one submission (a personal best before the #1 it made).
const (
	// FeedPersonalBest: a player's entry on a best board improved (Old
	// is the previous entry's keys, nil when the player had none in the
	// period).
	FeedPersonalBest FeedKind = 1
	// FeedNewLeader: a submission made its player #1 of the period among
	// visible players (Old and Other are the previous #1's keys and id,
	// nil and "" when the period had no visible entry).
	FeedNewLeader FeedKind = 2
	// FeedTournamentSettled: a tournament board was settled (appended by
	// the component that settles it, see the feed module's AppendFeed, feed/).
	FeedTournamentSettled FeedKind = 3
	// FeedLeagueSettled: a league's period was settled (emitted by the
	// settlement run, league/; Data holds the outcomes).
	FeedLeagueSettled FeedKind = 4
)

var feedKindNames = [...]string{FeedPersonalBest: "personal_best", FeedNewLeader: "new_leader", FeedTournamentSettled: "tournament_settled",
	FeedLeagueSettled: "league_settled"}

// String is the kind's name in the API.
func (k FeedKind) String() string {
	if int(k) < len(feedKindNames) && feedKindNames[k] != "" {
		return feedKindNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// Valid reports whether k is a known kind.
func (k FeedKind) Valid() bool { return k >= FeedPersonalBest && k <= FeedLeagueSettled }

// ParseFeedKind returns the kind named s.
func ParseFeedKind(s string) (FeedKind, bool) {
	for k, n := range feedKindNames {
		if n != "" && n == s {
			return FeedKind(k), true
		}
	}
	return 0, false
}

// MaxFeedData bounds the data object of a feed event, in bytes.
const MaxFeedData = 4096

// FeedEvent is one event of the activity feed. (Board, Seq, Kind) is its
// identity: Seq is the seq of the submission that caused it (for a
// settled tournament, the board's last seq when it was settled), so the
// same event has the same id on every node, and storing it twice keeps
// one.
type FeedEvent struct {
	Board  string
	Seq    uint64
	Kind   FeedKind
	At     time.Time // when the causing write was accepted (ms precision)
	Period string
	Player string          // the player concerned ("" for a settlement without one)
	Keys   []int64         // the player's new keys (nil when not applicable)
	Old    []int64         // the previous keys (personal best: the player's; new #1: the previous leader's); nil when none
	Other  string          // new #1: the previous leader ("" when none)
	Data   json.RawMessage // tournament settled: the settling component's object; nil otherwise
}

// ID is the event's id, the same on every node: "<board>/<seq>/<kind>".
// Board ids never contain '/'.
func (ev *FeedEvent) ID() string {
	return ev.Board + "/" + strconv.FormatUint(ev.Seq, 10) + "/" + ev.Kind.String()
}

// FeedPos is a position in the feed's order, the key of an event.
type FeedPos struct {
	At    int64 // unix ms
	Board string
	Seq   uint64
	Kind  FeedKind
}

// Pos returns the event's position.
func (ev *FeedEvent) Pos() FeedPos {
	return FeedPos{At: Millis(ev.At), Board: ev.Board, Seq: ev.Seq, Kind: ev.Kind}
}

// CompareFeed is the feed's order, total and stable: by time, then board
// id, then seq, then kind. Newest first means descending. It returns -1
// when a comes before (is older than) b.
func CompareFeed(a, b FeedPos) int {
	switch {
	case a.At != b.At:
		return cmpInt(a.At, b.At)
	case a.Board != b.Board:
		return strings.Compare(a.Board, b.Board)
	case a.Seq != b.Seq:
		if a.Seq < b.Seq {
			return -1
		}
		return 1
	}
	return cmpInt(int64(a.Kind), int64(b.Kind))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ParseFeedID parses an event id made by FeedEvent.ID.
func ParseFeedID(id string) (board string, seq uint64, kind FeedKind, err error) {
	i := strings.IndexByte(id, '/')
	j := strings.LastIndexByte(id, '/')
	if i <= 0 || j <= i {
		return "", 0, 0, Errorf(ECodeInvalid, "feed event id %q is not <board>/<seq>/<kind>", id)
	}
	board = id[:i]
	seq, perr := strconv.ParseUint(id[i+1:j], 10, 64)
	kind, ok := ParseFeedKind(id[j+1:])
	if !ValidBoardID(board) || perr != nil || !ok {
		return "", 0, 0, Errorf(ECodeInvalid, "feed event id %q is not <board>/<seq>/<kind>", id)
	}
	return board, seq, kind, nil
}

// Check reports what no store can keep faithfully.
func (ev *FeedEvent) Check() error {
	switch {
	case ev.Board == "":
		return fmt.Errorf("feed event without a board")
	case !ev.Kind.Valid():
		return fmt.Errorf("feed event %s has unknown kind %d", ev.ID(), ev.Kind)
	case ev.Seq > math.MaxInt64:
		return fmt.Errorf("feed event seq %d is out of range", ev.Seq)
	case len(ev.Keys) > MaxKeys || len(ev.Old) > MaxKeys:
		return fmt.Errorf("feed event %s has too many keys", ev.ID())
	case len(ev.Data) > MaxFeedData:
		return fmt.Errorf("feed event %s has %d bytes of data (at most %d)", ev.ID(), len(ev.Data), MaxFeedData)
	}
	return nil
}

// FeedQuery selects feed events: those of Boards (every board when nil),
// older than Before when it is set, newest first, at most Limit.
type FeedQuery struct {
	Boards []string
	Before *FeedPos
	Limit  int
}

// FeedStore is what a Store offers for the activity feed (both stores do).
// The events themselves are written by Commit, as a part of the Batch
// (FeedPart), in the same transaction as the submissions that caused them;
// an event whose (board, seq, kind) is already stored is kept as it is.
// DeleteBoard removes the board's events.
type FeedStore interface {
	// FeedPart returns evs as a part of a Batch that this store commits
	// (Part). evs is not copied: it must not change until the commit
	// returns. An event already stored, or twice in the batch, is stored
	// once, as first stored.
	FeedPart(evs []FeedEvent) Part
	// Feed returns the events q selects, newest first (CompareFeed
	// descending).
	Feed(ctx context.Context, q FeedQuery) ([]FeedEvent, error)
	// PruneFeed deletes, for the given boards, the events past the keep
	// newest of each board, at most max rows in all, and returns how
	// many it deleted (max means there may be more).
	PruneFeed(ctx context.Context, boards []string, keep, max int) (int, error)
}

// FeedOverCap is an optional ability of a FeedStore: the boards holding
// more than keep events, found in one statement. A start prunes those
// rather than every board (PruneFeed is a statement per board, which at
// 100,000 boards kept the writer's lock busy for seconds after a start).
type FeedOverCap interface {
	FeedBoardsOver(ctx context.Context, keep int) ([]string, error)
}

// FeedKeysJSON encodes keys for the stores' text columns: null for nil.
func FeedKeysJSON(keys []int64) []byte {
	if keys == nil {
		return nil
	}
	b := make([]byte, 0, 8*len(keys)+2)
	b = append(b, '[')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return append(b, ']')
}

// ParseFeedKeys decodes FeedKeysJSON's output (nil for NULL).
func ParseFeedKeys(b []byte) ([]int64, error) {
	if b == nil {
		return nil, nil
	}
	keys := []int64{}
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("feed keys %q: %w", b, err)
	}
	return keys, nil
}
