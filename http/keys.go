package http

import (
	"net/http"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

type keyBody struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	Boards []string `json:"boards"`
}

func appendKey(b []byte, k *podium.APIKey, secret string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, k.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, k.Name)
	b = append(b, `,"scopes":[`...)
	for i, sc := range k.Scopes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, sc)
	}
	b = append(b, `],"boards":[`...)
	for i, p := range k.Boards {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p)
	}
	b = append(b, `],"created_at":`...)
	b = appendTime(b, k.CreatedAt)
	if secret != "" {
		b = append(b, `,"key":`...)
		b = appendString(b, secret)
	}
	return append(b, '}')
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body keyBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	k := &podium.APIKey{Name: body.Name, Scopes: body.Scopes, Boards: body.Boards}
	if err := k.Normalize(); err != nil {
		return err
	}
	out, secret, err := s.eng.CreateKey(r.Context(), k)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, appendKey(nil, &out, secret))
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	keys, err := s.eng.ListKeys(r.Context())
	if err != nil {
		return err
	}
	b := []byte(`{"keys":[`)
	for i := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, &keys[i], "")
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

func (s *Server) deleteKey(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	if err := s.eng.DeleteKey(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	diffs, err := s.eng.CheckIndexes(r.Context())
	if err != nil {
		return err
	}
	b := []byte(`{"ok":`)
	if len(diffs) == 0 {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"differences":[`...)
	for i, d := range diffs {
		if i >= 1000 {
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDiff(b, d)
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

func appendDiff(b []byte, d engine.Diff) []byte {
	b = append(b, `{"board":`...)
	b = appendString(b, d.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, d.Period)
	b = append(b, `,"player":`...)
	b = appendString(b, d.Player)
	b = append(b, `,"want":`...)
	b = appendString(b, d.Want)
	b = append(b, `,"got":`...)
	b = appendString(b, d.Got)
	return append(b, '}')
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	if err := s.eng.Reload(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, []byte(`{"ok":true}`))
	return nil
}
