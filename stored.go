package podium

import "encoding/json"

// How stores keep things, shared by every Store so that the databases hold
// the same documents.

// boardDocument is a board's definition as stores keep it: one JSON
// document with everything but the id, the times and the generation, which
// are columns. A new board field then needs no migration.
type boardDocument struct {
	Title  string          `json:"title"`
	Keys   []KeyDef        `json:"keys"`
	Mode   Mode            `json:"mode"`
	Reset  Reset           `json:"reset"`
	Public bool            `json:"public"`
	Meta   json.RawMessage `json:"meta,omitempty"`
	// best_k and aggregate boards (results.go, aggregate.go)
	Keep      int        `json:"keep,omitempty"`
	Aggregate *Aggregate `json:"aggregate,omitempty"`
	// Tournament and points parts (tournament.go).
	Tournament *Tournament `json:"tournament,omitempty"`
	Points     *Points     `json:"points,omitempty"`
	// League (league.go).
	League *League `json:"league,omitempty"`
	// PlayerSubmit (session.go).
	PlayerSubmit bool `json:"player_submit,omitempty"`
	// Review (review.go).
	Review *Review `json:"review,omitempty"`
	// Evidence (evidence.go).
	Evidence *EvidencePolicy `json:"evidence,omitempty"`
	// Quota (quota.go).
	Quota *Quota `json:"quota,omitempty"`
	// RankStyle (rankstyle.go).
	RankStyle RankStyle `json:"rank_style,omitempty"`
	// KeepPeriods and PeriodsFrom (retention.go).
	KeepPeriods int         `json:"keep_periods,omitempty"`
	PeriodsFrom string      `json:"periods_from,omitempty"`
	GroupSet    *GroupSet   `json:"group_set,omitempty"`
	GroupBoard  *GroupBoard `json:"group_board,omitempty"`
}

// Document returns b's definition as stores keep it (see SetDocument).
func (b *Board) Document() ([]byte, error) {
	return json.Marshal(boardDocument{Title: b.Title, Keys: b.Keys, Mode: b.Mode, Reset: b.Reset, Public: b.Public,
		Meta: StoredMeta(b.Meta), Keep: b.Keep, Aggregate: b.Aggregate, Tournament: b.Tournament, Points: b.Points, League: b.League,
		PlayerSubmit: b.PlayerSubmit, Review: b.Review, Evidence: b.Evidence, Quota: b.Quota,
		RankStyle: b.RankStyle, KeepPeriods: b.KeepPeriods, PeriodsFrom: b.PeriodsFrom, GroupSet: b.GroupSet, GroupBoard: b.GroupBoard})
}

// SetDocument sets b's definition from a document Document made; the id,
// times and generation are left alone.
func (b *Board) SetDocument(doc []byte) error {
	var d boardDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return err
	}
	b.Title, b.Keys, b.Mode, b.Reset, b.Public = d.Title, d.Keys, d.Mode, d.Reset, d.Public
	b.Meta = LoadedMeta(d.Meta)
	b.Keep, b.Aggregate = d.Keep, d.Aggregate
	b.Tournament, b.Points = d.Tournament, d.Points
	b.League = d.League
	b.PlayerSubmit = d.PlayerSubmit
	b.Review = d.Review
	b.Evidence = d.Evidence
	b.Quota = d.Quota
	b.RankStyle = d.RankStyle
	b.KeepPeriods, b.PeriodsFrom = d.KeepPeriods, d.PeriodsFrom
	b.GroupSet, b.GroupBoard = d.GroupSet, d.GroupBoard
	return nil
}

// StoredMeta returns a meta object as stores keep it: nil (NULL) for an
// absent, null or empty object, else meta itself.
func StoredMeta(meta json.RawMessage) json.RawMessage {
	switch string(meta) {
	case "", "null", "{}":
		return nil
	}
	return meta
}

// LoadedMeta returns a stored meta object as it is read back: {} for NULL
// (or null), else raw itself, which the caller must not reuse.
func LoadedMeta(raw []byte) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(raw)
}
