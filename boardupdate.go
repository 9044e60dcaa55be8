package podium

import "encoding/json"

// A PUT of a board: what it gave, and the board it makes.

// BoardUpdate is a PUT of a board: the fields the request gave. A nil field
// keeps the board's current value, or takes the default for a new board, so
// that a PUT which leaves out reset never turns a daily board into one that
// never resets.
type BoardUpdate struct {
	ID     string
	Title  *string
	Keys   []KeyDef // nil: keep
	Mode   *Mode
	Reset  *Reset // replaced as a whole: {"every": "day"} means the zone UTC
	Public *bool
	Meta   json.RawMessage // nil: keep

	// Keep (best_k) and Aggregate: nil keeps them, unless Mode is given:
	// then they are what the update says (absent: none).
	Keep      *int
	Aggregate *Aggregate
	// Tournament and points parts (tournament.go); nil: keep.
	Tournament *Tournament
	Points     *Points
	// League: nil keeps it (league.go).
	League *League
	// PlayerSubmit: nil keeps it.
	PlayerSubmit *bool
	// Review: nil keeps it; Hold "none" removes it (review.go).
	Review *Review
	// Evidence: nil keeps it; replaced as a whole.
	Evidence *EvidencePolicy
	// Quota: nil keeps it; a Max of 0 removes it (quota.go).
	Quota *Quota
	// RankStyle: nil keeps it (rankstyle.go).
	RankStyle *RankStyle
	// KeepPeriods: nil keeps it (retention.go).
	KeepPeriods *int
	// GroupSet and GroupBoard: nil keeps them (group.go).
	GroupSet   *GroupSet
	GroupBoard *GroupBoard
}

// FullUpdate is the update that replaces every field of a board with b's.
func FullUpdate(b *Board) *BoardUpdate {
	c := *b
	return &BoardUpdate{ID: c.ID, Title: &c.Title, Keys: c.Keys, Mode: &c.Mode, Reset: &c.Reset, Public: &c.Public, Meta: c.Meta,
		Keep: &c.Keep, Aggregate: c.Aggregate.Clone(), Tournament: c.Tournament, Points: c.Points, League: c.League.Clone(),
		PlayerSubmit: &c.PlayerSubmit, Review: c.Review, Evidence: c.Evidence,
		Quota: fullQuota(c.Quota), RankStyle: &c.RankStyle, KeepPeriods: &c.KeepPeriods, GroupSet: c.GroupSet, GroupBoard: c.GroupBoard}
}

// Apply returns the board that results from applying u to cur (nil for a
// new board). The result is not normalized.
func (u *BoardUpdate) Apply(cur *Board) Board {
	var b Board
	if cur != nil {
		b = *cur
		b.Keys = append([]KeyDef(nil), cur.Keys...)
	}
	b.ID = u.ID
	if u.Title != nil {
		b.Title = *u.Title
	}
	if u.Keys != nil {
		b.Keys = append([]KeyDef(nil), u.Keys...)
	}
	b.Aggregate = b.Aggregate.Clone()
	if u.Mode != nil {
		b.Mode = *u.Mode
		b.Keep, b.Aggregate = 0, nil
	}
	if u.Keep != nil {
		b.Keep = *u.Keep
	}
	if u.Aggregate != nil {
		b.Aggregate = u.Aggregate.Clone()
		if u.Mode == nil && b.Mode != AggregateMode {
			b.Mode = "" // becomes aggregate in Normalize
		}
	}
	if u.Reset != nil {
		b.Reset = *u.Reset
	}
	if u.Public != nil {
		b.Public = *u.Public
	}
	if u.Meta != nil {
		b.Meta = u.Meta
	}
	if u.PlayerSubmit != nil {
		b.PlayerSubmit = *u.PlayerSubmit
	}
	if u.RankStyle != nil {
		b.RankStyle = *u.RankStyle
	}
	if u.KeepPeriods != nil {
		b.KeepPeriods = *u.KeepPeriods
	}
	if u.Review != nil { // review.go
		b.Review = u.Review
		if u.Review.Hold == HoldNone {
			b.Review = nil
		}
	}
	if b.Review != nil {
		r := *b.Review
		r.Threshold = append([]int64(nil), r.Threshold...)
		if len(r.Threshold) == 0 {
			r.Threshold = nil
		}
		b.Review = &r
	}
	if u.Evidence != nil {
		ev := *u.Evidence
		b.Evidence = &ev
	}
	b.Quota = u.applyQuota(b.Quota) // quota.go
	if b.Tournament != nil {
		t := *b.Tournament
		b.Tournament = &t
	}
	if b.Points != nil {
		p := *b.Points
		b.Points = &p
	}
	if u.Tournament != nil {
		t := *u.Tournament
		b.Tournament = &t
	}
	if u.Points != nil {
		p := *u.Points
		b.Points = &p
	}
	b.League = b.League.Clone()
	if u.League != nil {
		b.League = u.League.Clone()
	}
	if u.GroupSet != nil { // group.go
		gs := *u.GroupSet
		b.GroupSet = &gs
	}
	if u.GroupBoard != nil {
		gb := *u.GroupBoard
		b.GroupBoard = &gb
	}
	return b
}
