package podium

import (
	"context"
	"regexp"
	"time"
)

// Groups (issue 21, part 2): clans, teams or guilds of players, and group
// boards that rank the groups by their members' entries on a source board.
//
// A group set is a board (Board.GroupSet, mode latest, one key) whose
// entries are its groups, each ranked by its number of members: the set's
// board is where its caps are defined, what a membership change locks in
// shared mode (so joins on several nodes take turns and caps hold
// exactly), and its entries list the groups with no code of their own. A
// group exists while it has members. Memberships are rows of their own
// (GroupChange), numbered densely per set; the groups module keeps them in
// memory.
//
// A group board (Board.GroupBoard, mode latest) ranks the groups of a set
// by an aggregate of their members' entries on a source board: the sum or
// the average of the best k members, or the best member. Its entries are
// written by the groups module in the same group commit as the member's
// score, join or leave that moves them (the groups module's package doc).

// Limits of groups.
const (
	MaxGroupIDLen      = 64        // bytes of a group id
	MaxGroupMembers    = 1000      // the highest max_members of a set
	MaxGroupsPerPlayer = 100       // the highest max_per_player of a set
	MaxGroupsPerSet    = 1_000_000 // the highest max_groups of a set

	DefaultGroupMembers   = 50
	DefaultGroupPerPlayer = 1
	DefaultGroupsPerSet   = 100_000
)

// GroupSet makes a board a set of groups (mode latest, one key: the
// number of members).
type GroupSet struct {
	// MaxMembers caps the members of each group (default 50).
	MaxMembers int `json:"max_members,omitempty"`
	// MaxPerPlayer caps the groups of the set one player is in (default 1).
	MaxPerPlayer int `json:"max_per_player,omitempty"`
	// MaxGroups caps the groups of the set (default 100,000).
	MaxGroups int `json:"max_groups,omitempty"`
}

// Group board rules.
const (
	GroupSum  = "sum"  // the sum of the best k members' keys
	GroupAvg  = "avg"  // their average, rounded toward zero
	GroupBest = "best" // the best member's keys
)

// GroupBoard makes a board rank the groups of Set by Rule over their
// members' entries on Source (mode latest; the source's keys, in the same
// orders; the source's reset).
type GroupBoard struct {
	Set    string `json:"set"`
	Source string `json:"source"`
	Rule   string `json:"rule"`
	// K is how many members count for sum and avg, the best first
	// (default: the set's max_members, that is every member).
	K int `json:"k,omitempty"`
}

var groupIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,63}$`)

// ValidGroupID checks a group id: 1 to 64 bytes of [a-z0-9_.:-], starting
// with a letter or digit (ECodeInvalid). A group id is the player id of
// the group's entries, so it must be one.
func ValidGroupID(id string) error {
	if !groupIDRe.MatchString(id) {
		return Errorf(ECodeInvalid, "group id must match [a-z0-9][a-z0-9_.:-]{0,63}")
	}
	return nil
}

// normalizeGroup fills the defaults of a group set and checks what a
// group set or group board can check alone; the module checks the rest
// against the other boards.
func (b *Board) normalizeGroup() error {
	if b.GroupSet != nil && b.GroupBoard != nil {
		return Errorf(ECodeInvalid, "a board is a group set or a group board, not both")
	}
	if b.GroupSet == nil && b.GroupBoard == nil {
		return nil
	}
	if b.Mode != Latest {
		return Errorf(ECodeInvalid, "a group set or group board has mode latest (its entries are written by podium)")
	}
	if b.Aggregate != nil || b.Tournament != nil || b.Points != nil || b.Review != nil || b.Quota != nil || b.PlayerSubmit {
		return Errorf(ECodeInvalid, "a group set or group board takes no aggregate, tournament, points, review, quota or player_submit")
	}
	if s := b.GroupSet; s != nil {
		c := *s
		if len(b.Keys) != 1 {
			return Errorf(ECodeInvalid, "a group set has one key: the number of members")
		}
		if b.Reset.Every != Never {
			return Errorf(ECodeInvalid, "a group set does not reset")
		}
		for _, f := range []struct {
			name     string
			v        *int
			def, max int
		}{{"max_members", &c.MaxMembers, DefaultGroupMembers, MaxGroupMembers},
			{"max_per_player", &c.MaxPerPlayer, DefaultGroupPerPlayer, MaxGroupsPerPlayer},
			{"max_groups", &c.MaxGroups, DefaultGroupsPerSet, MaxGroupsPerSet}} {
			if *f.v == 0 {
				*f.v = f.def
			}
			if *f.v < 1 || *f.v > f.max {
				return Errorf(ECodeInvalid, "group_set.%s must be 1 to %d", f.name, f.max)
			}
		}
		b.GroupSet = &c
		return nil
	}
	g := *b.GroupBoard
	if !ValidBoardID(g.Set) || !ValidBoardID(g.Source) {
		return Errorf(ECodeInvalid, "group_board.set and group_board.source must be board ids")
	}
	if g.Set == b.ID || g.Source == b.ID || g.Set == g.Source {
		return Errorf(ECodeInvalid, "group_board.set, group_board.source and the board itself must be three boards")
	}
	switch g.Rule {
	case GroupSum, GroupAvg, GroupBest:
	default:
		return Errorf(ECodeInvalid, "group_board.rule must be sum, avg or best")
	}
	if g.K < 0 || g.K > MaxGroupMembers {
		return Errorf(ECodeInvalid, "group_board.k must be 0 (every member) to %d", MaxGroupMembers)
	}
	if g.Rule == GroupBest {
		g.K = 1
	}
	b.GroupBoard = &g
	return nil
}

// GroupChange is one membership change of a group set: a join or a
// leave. N numbers the changes of a set from 1 in the order they were
// committed.
type GroupChange struct {
	Set    string
	N      int64
	Group  string
	Player string
	Join   bool // false: a leave
	At     time.Time
}

// GroupBatch is the groups part of a Batch.
type GroupBatch struct {
	Changes []GroupChange
	// DeleteSets removes every change of these sets (a set board
	// deleted, in the transaction that deletes it).
	DeleteSets []string
}

// Len is the number of rows.
func (b *GroupBatch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.Changes) + len(b.DeleteSets)
}

// GroupStore is the optional Store ability that groups need; both
// sqlite.Store and postgres.Store have it (migration 0150).
type GroupStore interface {
	// GroupPart returns b as a part of a Batch (or of a board deletion)
	// that this store commits. b must not change until the commit
	// returns.
	GroupPart(b *GroupBatch) Part
	// GroupChanges returns the changes of a set with N above after, by N.
	GroupChanges(ctx context.Context, set string, after int64) ([]GroupChange, error)
}
