package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/podiumhq/podium"
)

// Event types an endpoint may subscribe to. Each event's data is
// documented in docs/API.md ("Webhooks") and in the OpenAPI spec's
// webhooks.
const (
	// TypeLeaderChanged: a submission made its player #1 of a period
	// (the activity feed's new_leader).
	TypeLeaderChanged = "leader.changed"
	// TypePersonalBest: a submission improved its player's entry on a
	// best board. High volume: an endpoint gets it only if it names it.
	TypePersonalBest = "personal_best"
	// TypeTournamentSettled: a tournament was settled (or settled again).
	TypeTournamentSettled = "tournament.settled"
	// TypeLeagueSettled: a league's period was settled, with the
	// players' outcomes (as many as fit, league/).
	TypeLeagueSettled = "league.settled"
	// TypeBoardCreated and TypeBoardDeleted: a board was made or deleted.
	TypeBoardCreated = "board.created"
	TypeBoardDeleted = "board.deleted"
)

// Types lists the event types, in the order the documentation gives them.
var Types = []string{TypeLeaderChanged, TypePersonalBest, TypeTournamentSettled, TypeLeagueSettled, TypeBoardCreated, TypeBoardDeleted,
	TypeReviewHeld, TypeReviewDecided, // review.go
	TypePeriodEnded, TypeContestFrozen, TypeContestEnded, // timed.go
}

func knownType(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// eventID derives an event's id from what caused it, so that every node,
// and every second store of the same change, names it alike: "evt_" and
// 32 hex digits of SHA-256 over its type, its board and what identifies
// the change on that board (a submission's seq, a board's creation time).
func eventID(typ, board, cause string) string {
	h := sha256.New()
	h.Write([]byte(typ))
	h.Write([]byte{0})
	h.Write([]byte(board))
	h.Write([]byte{0})
	h.Write([]byte(cause))
	return "evt_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// millis formats t as the API does: UTC, to the millisecond.
func millis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// standing is a player's place in an event.
type standing struct {
	Player string  `json:"player"`
	Keys   []int64 `json:"keys"`
}

// feedType is the webhook type of an activity event's kind; "" for a kind
// this module does not send.
func feedType(k podium.FeedKind) string {
	switch k {
	case podium.FeedNewLeader:
		return TypeLeaderChanged
	case podium.FeedPersonalBest:
		return TypePersonalBest
	case podium.FeedTournamentSettled:
		return TypeTournamentSettled
	case podium.FeedLeagueSettled:
		return TypeLeagueSettled
	}
	return ""
}

// fromFeed maps an activity event to its webhook type and data; ok false:
// no webhook event (a kind this module does not send).
func fromFeed(ev *podium.FeedEvent) (typ string, data any, ok bool) {
	switch ev.Kind {
	case podium.FeedNewLeader:
		d := struct {
			Board    string    `json:"board"`
			Period   string    `json:"period"`
			Seq      uint64    `json:"seq"`
			Leader   standing  `json:"leader"`
			Previous *standing `json:"previous"`
		}{Board: ev.Board, Period: ev.Period, Seq: ev.Seq, Leader: standing{ev.Player, ev.Keys}}
		if ev.Other != "" {
			d.Previous = &standing{ev.Other, ev.Old}
		}
		return TypeLeaderChanged, d, true
	case podium.FeedPersonalBest:
		return TypePersonalBest, struct {
			Board  string  `json:"board"`
			Period string  `json:"period"`
			Seq    uint64  `json:"seq"`
			Player string  `json:"player"`
			Keys   []int64 `json:"keys"`
			Old    []int64 `json:"old"`
		}{ev.Board, ev.Period, ev.Seq, ev.Player, ev.Keys, ev.Old}, true
	case podium.FeedTournamentSettled:
		d := struct {
			Board      string          `json:"board"`
			Period     string          `json:"period"`
			Seq        uint64          `json:"seq"`
			Winner     *standing       `json:"winner"`
			Settlement json.RawMessage `json:"settlement"`
		}{Board: ev.Board, Period: ev.Period, Seq: ev.Seq, Settlement: ev.Data}
		if ev.Player != "" {
			d.Winner = &standing{ev.Player, ev.Keys}
		}
		if d.Settlement == nil {
			d.Settlement = json.RawMessage("{}")
		}
		return TypeTournamentSettled, d, true
	case podium.FeedLeagueSettled:
		d := struct {
			Board      string          `json:"board"`
			Period     string          `json:"period"`
			Seq        uint64          `json:"seq"`
			Settlement json.RawMessage `json:"settlement"`
		}{Board: ev.Board, Period: ev.Period, Seq: ev.Seq, Settlement: ev.Data}
		if d.Settlement == nil {
			d.Settlement = json.RawMessage("{}")
		}
		return TypeLeagueSettled, d, true
	}
	return "", nil, false
}

// boardData is the data of a board event.
func boardData(b *podium.Board) any {
	return struct {
		Board     string      `json:"board"`
		Title     string      `json:"title"`
		Mode      podium.Mode `json:"mode"`
		Public    bool        `json:"public"`
		CreatedAt string      `json:"created_at"`
	}{b.ID, b.Title, b.Mode, b.Public, millis(b.CreatedAt)}
}

// envelope is a delivery's body: the event's id, type and time, and its
// data, as Standard Webhooks suggests.
func envelope(ev *podium.WebhookEvent) []byte {
	b, _ := json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{ev.ID, ev.Type, millis(ev.At), ev.Payload})
	return b
}
