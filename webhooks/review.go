package webhooks

import (
	"encoding/json"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Moderation's events. The review module announces a held item and a
// decision as engine signals (podium.SignalReviewHeld, ...) in the commit
// that stores them; this module, an engine.SignalSink, writes their
// outbox rows in that commit: a held item's in its group (Signal, then
// Parts), a rejection's in the review module's own batch (SignalParts),
// an approval's in the group that logs the approved score. The data is
// what the admin API's review item shows of the item and its decision,
// without the entry, the history and the evidence it adds.

const (
	// TypeReviewHeld: a submission was held for review.
	TypeReviewHeld = "review.held"
	// TypeReviewDecided: a held submission was approved or rejected.
	TypeReviewDecided = "review.decided"
)

// Signal implements engine.SignalSink: a signal of the group becomes an
// outbox event in the group's commit, if an endpoint takes it.
func (m *Module) Signal(g *engine.Group, s *engine.Signal) {
	if ev, ok := m.fromSignal(s); ok {
		m.add(g, ev)
	}
}

// SignalParts implements engine.SignalSink: the outbox events of signals
// a module's own batch stores.
func (m *Module) SignalParts(_ podium.Store, ss []engine.Signal) ([]podium.Part, func()) {
	var evs []podium.WebhookEvent
	for i := range ss {
		if ev, ok := m.fromSignal(&ss[i]); ok {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		return nil, nil
	}
	return []podium.Part{m.store.WebhookPart(evs)}, func() { m.stored(evs) }
}

// fromSignal is the outbox event of a signal; ok false: none (a kind this
// module does not send, or no endpoint takes it).
func (m *Module) fromSignal(s *engine.Signal) (podium.WebhookEvent, bool) {
	typ := signalType(s.Kind)
	if typ == "" || m.store == nil || len(m.eps.Load().match(typ, s.Board)) == 0 {
		return podium.WebhookEvent{}, false
	}
	it, ok := s.Value.(podium.ReviewItem)
	if !ok {
		m.log.Error("webhooks: a review signal without its item", "kind", s.Kind, "board", s.Board)
		return podium.WebhookEvent{}, false
	}
	return m.newEvent(typ, s.Board, s.Cause, s.At, reviewData(&it))
}

// signalType is the webhook type of a signal's kind; "" for a kind this
// module does not send.
func signalType(kind string) string {
	switch kind {
	case podium.SignalReviewHeld:
		return TypeReviewHeld
	case podium.SignalReviewDecided:
		return TypeReviewDecided
	}
	return ""
}

// decision is a review event's decision, as the admin API shows it.
type decision struct {
	By     string `json:"by"`
	At     string `json:"at"`
	Reason string `json:"reason"`
	Seq    uint64 `json:"seq,omitempty"` // approved: the log row's seq
}

// reviewData is the data of a review event: the item, with its decision
// once decided.
func reviewData(it *podium.ReviewItem) any {
	d := struct {
		ID          string          `json:"id"`
		Board       string          `json:"board"`
		Period      string          `json:"period"`
		Player      string          `json:"player"`
		Keys        []int64         `json:"keys"`
		Meta        json.RawMessage `json:"meta"`
		SubmittedAt string          `json:"submitted_at"`
		Reason      string          `json:"reason"`
		Status      string          `json:"status"`
		Decision    *decision       `json:"decision"`
	}{ID: it.ID, Board: it.Board, Period: it.Period, Player: it.Player, Keys: it.Keys, Meta: it.Meta,
		SubmittedAt: millis(it.SubmittedAt), Reason: it.Reason, Status: it.Status}
	if len(d.Meta) == 0 {
		d.Meta = json.RawMessage("{}")
	}
	if d.Keys == nil {
		d.Keys = []int64{}
	}
	if it.Status != podium.ReviewPending {
		d.Decision = &decision{By: it.DecidedBy, At: millis(it.DecidedAt), Reason: it.Note, Seq: it.Seq}
	}
	return d
}
