package http

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
)

// playerHandlers serves the players' profiles.
type playerHandlers struct {
	*base
	eng playerStore
}

// playerStore is what the player handlers call.
type playerStore interface {
	Player(id string) (podium.Player, error)
	PutPlayer(ctx context.Context, p *podium.Player) (podium.Player, error)
}

type playerBody struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Hidden bool            `json:"hidden"`
	Meta   json.RawMessage `json:"meta"`
}

func appendPlayer(b []byte, p *podium.Player) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, p.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, p.Name)
	b = append(b, `,"hidden":`...)
	b = strconv.AppendBool(b, p.Hidden)
	b = append(b, `,"meta":`...)
	b = appendMeta(b, p.Meta)
	if !p.UpdatedAt.IsZero() {
		b = append(b, `,"updated_at":`...)
		b = appendTime(b, p.UpdatedAt)
	}
	return append(b, '}')
}

func (s *playerHandlers) putPlayer(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id := r.PathValue("player")
	// A new player takes the rule for new ids; one that exists already
	// (stored before that rule refused invisible characters) may still be
	// named or hidden.
	if err := podium.ValidPlayerID(id); err != nil {
		if _, known := s.eng.Player(id); podium.ValidPlayerRef(id) != nil || known != nil {
			return err
		}
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body playerBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if body.ID != "" && body.ID != id {
		return podium.Errorf(podium.ECodeInvalid, "id %q in the body differs from the player %q in the path", body.ID, id)
	}
	p := &podium.Player{ID: id, Name: body.Name, Hidden: body.Hidden, Meta: body.Meta}
	if err := p.Normalize(); err != nil {
		return err
	}
	out, err := s.eng.PutPlayer(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendPlayer(nil, &out))
	return nil
}

func (s *playerHandlers) getPlayer(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.require(r, podium.ScopeRead, ""); err != nil {
		return err
	}
	p, err := s.eng.Player(r.PathValue("player"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendPlayer(nil, &p))
	return nil
}
