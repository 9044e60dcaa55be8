package podium

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode"
	"unicode/utf8"
)

// Player is someone with entries. Players need not be registered: an id seen
// in a submission is a player; PUT /v1/players gives it a name or hides it.
type Player struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Hidden    bool            `json:"hidden"`
	Meta      json.RawMessage `json:"meta"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// ValidPlayerID checks that id is 1 to 128 bytes of UTF-8 without control
// characters.
func ValidPlayerID(id string) error {
	if id == "" || len(id) > MaxPlayerIDLen {
		return Errorf(ECodeInvalid, "player must be 1 to %d bytes", MaxPlayerIDLen)
	}
	return validText("player", id)
}

// Normalize validates p and fills defaults.
func (p *Player) Normalize() error {
	if err := ValidPlayerID(p.ID); err != nil {
		return err
	}
	if len(p.Name) > MaxNameLen {
		return Errorf(ECodeInvalid, "name is longer than %d bytes", MaxNameLen)
	}
	if err := validText("name", p.Name); err != nil {
		return err
	}
	meta, err := NormalizeMeta(p.Meta)
	if err != nil {
		return err
	}
	p.Meta = meta
	return nil
}

// validText rejects invalid UTF-8 and control characters in a string field.
func validText(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(ECodeInvalid, "%s is not valid UTF-8", field)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return Errorf(ECodeInvalid, "%s must not contain control characters", field)
		}
	}
	return nil
}

func compactJSON(dst []byte, src []byte) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, src); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
