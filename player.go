package podium

import (
	"bytes"
	"encoding/json"
	"strings"
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

// ValidPlayerID checks an id that a request may create (a submission, a
// session, a tournament join, a CTF attempt, a new player record): 1 to
// MaxPlayerIDLen bytes of UTF-8 without control characters and without
// characters that make two different ids look the same (InvisibleRune),
// and not beginning or ending with a space. It returns ECodeInvalid.
func ValidPlayerID(id string) error {
	if err := ValidPlayerRef(id); err != nil {
		return err
	}
	if i := strings.IndexFunc(id, InvisibleRune); i >= 0 {
		r, _ := utf8.DecodeRuneInString(id[i:])
		return Errorf(ECodeInvalid, "player must not contain invisible or format characters (U+%04X at byte %d): they make two ids look the same", r, i)
	}
	if id[0] == ' ' || id[len(id)-1] == ' ' {
		return Errorf(ECodeInvalid, "player must not begin or end with a space")
	}
	return nil
}

// ValidPlayerRef checks an id that names a player a request reads or
// removes: 1 to MaxPlayerIDLen bytes of UTF-8 without control characters,
// the rule ids were created under before ValidPlayerID refused invisible
// characters, so that such a player's entries stay readable, removable and
// movable (restore) after an upgrade. It returns ECodeInvalid.
func ValidPlayerRef(id string) error {
	if id == "" || len(id) > MaxPlayerIDLen {
		return Errorf(ECodeInvalid, "player must be 1 to %d bytes", MaxPlayerIDLen)
	}
	return validText("player", id)
}

// InvisibleRune reports whether r is refused in ids because it shows as
// nothing, or changes how its neighbours show, so that two different ids
// could look identical: format characters (Unicode category Cf: the bidi
// embeddings, overrides, isolates and marks U+202A-202E, U+2066-2069,
// U+200E-200F, U+061C; zero-width U+200B-200D, U+2060; the BOM U+FEFF;
// the soft hyphen U+00AD; tags), the other default-ignorable code points
// (U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, ...),
// variation selectors, and every space but U+0020 (U+00A0, U+2000-200A,
// U+3000, ...).
func InvisibleRune(r rune) bool {
	if r < 0x80 {
		return false // ASCII: controls are refused as such, the space is allowed
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) || unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// Normalize validates p and fills defaults. It checks the id with
// ValidPlayerRef: a caller that creates the player checks ValidPlayerID.
func (p *Player) Normalize() error {
	if err := ValidPlayerRef(p.ID); err != nil {
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
