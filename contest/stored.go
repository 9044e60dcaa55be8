package contest

import (
	"encoding/json"

	"github.com/podiumhq/podium"
)

// How stores keep contests and challenges: one JSON document with
// everything but the keys and times that are columns, so that a new field
// needs no migration. Times in documents are unix milliseconds.

type contestDocument struct {
	Title      string          `json:"title"`
	Start      int64           `json:"start"`
	End        int64           `json:"end"`
	Freeze     *int64          `json:"freeze,omitempty"`
	Revealed   bool            `json:"revealed,omitempty"`
	FirstBlood [3]int64        `json:"first_blood"`
	BloodRule  string          `json:"blood_rule,omitempty"` // "" before issue 17: auto
	Public     bool            `json:"public"`
	Meta       json.RawMessage `json:"meta,omitempty"`
}

// Document returns c's definition as stores keep it.
func (c *Contest) Document() ([]byte, error) {
	d := contestDocument{Title: c.Title, Start: podium.Millis(c.Start), End: podium.Millis(c.End), Revealed: c.Revealed,
		FirstBlood: c.FirstBlood, BloodRule: c.BloodRule, Public: c.Public, Meta: podium.StoredMeta(c.Meta)}
	if c.Freeze != nil {
		f := podium.Millis(*c.Freeze)
		d.Freeze = &f
	}
	return json.Marshal(d)
}

// SetDocument sets c's definition from a document Document made; the id
// and the created and updated times are left alone.
func (c *Contest) SetDocument(doc []byte) error {
	var d contestDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return err
	}
	c.Title, c.Start, c.End, c.Revealed = d.Title, podium.FromMillis(d.Start), podium.FromMillis(d.End), d.Revealed
	c.FirstBlood, c.Public, c.Meta, c.Freeze = d.FirstBlood, d.Public, podium.LoadedMeta(d.Meta), nil
	c.BloodRule = d.BloodRule
	if c.BloodRule == "" {
		c.BloodRule = BloodAuto
	}
	if d.Freeze != nil {
		f := podium.FromMillis(*d.Freeze)
		c.Freeze = &f
	}
	return nil
}

type challengeDocument struct {
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Scoring  Scoring `json:"scoring"`
	Hidden   bool    `json:"hidden,omitempty"` // issue 18
}

// Document returns ch's definition as stores keep it (Order is a column).
func (ch *Challenge) Document() ([]byte, error) {
	return json.Marshal(challengeDocument{Name: ch.Name, Category: ch.Category, Scoring: ch.Scoring, Hidden: ch.Hidden})
}

// SetDocument sets ch's name, category, scoring and hidden flag from a
// document.
func (ch *Challenge) SetDocument(doc []byte) error {
	var d challengeDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return err
	}
	ch.Name, ch.Category, ch.Scoring, ch.Hidden = d.Name, d.Category, d.Scoring, d.Hidden
	return nil
}
