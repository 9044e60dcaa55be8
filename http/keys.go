package http

import (
	"context"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
)

// adminHandlers serves the API keys and the admin operations (check,
// reload).
type adminHandlers struct {
	*base
	checker     indexChecker
	keys        keyAdmin
	settlements settlementChecker // the tournament module
	store       podium.Store
	contests    *ctf.Service // checked too; nil: none
}

// keyAdmin is what the key handlers call: the engine's keyring
// (engine.Keys).
type keyAdmin interface {
	Create(ctx context.Context, k *podium.APIKey) (podium.APIKey, string, error)
	List(ctx context.Context) ([]podium.APIKey, error)
	Delete(ctx context.Context, id string) error
}

// settlementChecker is what the admin's check and reload call of the
// tournament module.
type settlementChecker interface {
	CheckSettlements(ctx context.Context) ([]engine.Diff, error)
	RepairSettlements(ctx context.Context) ([]string, error)
}

// indexChecker is what the admin handlers check and reload through
// (engine.Checker).
type indexChecker interface {
	Indexes(ctx context.Context) ([]engine.Diff, error)
	Log(ctx context.Context) ([]engine.Diff, error)
	Reload(ctx context.Context) error
}

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

func (s *adminHandlers) createKey(w http.ResponseWriter, r *http.Request) error {
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
	out, secret, err := s.keys.Create(r.Context(), k)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, appendKey(nil, &out, secret))
	return nil
}

func (s *adminHandlers) listKeys(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	keys, err := s.keys.List(r.Context())
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

func (s *adminHandlers) deleteKey(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	if err := s.keys.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// quickChecker is a store that can run SQLite's quick_check (sqlite.Store).
type quickChecker interface {
	QuickCheck(ctx context.Context) ([]string, error)
}

// check runs, on the live server, what podium check runs offline: the
// store's own integrity check where it has one, the entries table against
// the log, and the in-memory indexes against the store.
func (s *adminHandlers) check(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	var problems []string
	qc, hasQC := s.store.(quickChecker)
	if hasQC {
		var err error
		if problems, err = qc.QuickCheck(r.Context()); err != nil {
			return err
		}
	}
	logDiffs, err := s.checker.Log(r.Context())
	if err != nil {
		return err
	}
	diffs, err := s.checker.Indexes(r.Context())
	if err != nil {
		return err
	}
	settleDiffs, err := s.settlements.CheckSettlements(r.Context()) // the tournament module
	if err != nil {
		return err
	}
	contestProblems, err := s.checkContests(r.Context())
	if err != nil {
		return err
	}
	b := []byte(`{"ok":`)
	b = strconv.AppendBool(b, len(problems)+len(logDiffs)+len(diffs)+len(settleDiffs)+len(contestProblems) == 0)
	b = append(b, `,"differences":`...)
	b = appendDiffs(b, diffs)
	b = append(b, `,"settlement_differences":`...)
	b = appendDiffs(b, settleDiffs)
	b = append(b, `,"log_differences":`...)
	b = appendDiffs(b, logDiffs)
	if hasQC {
		b = append(b, `,"quick_check":[`...)
		for i, p := range problems {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, ']')
	}
	if s.contests != nil {
		b = appendContestProblems(b, contestProblems)
	}
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

// appendDiffs appends the first 1000 diffs as a JSON array.
func appendDiffs(b []byte, diffs []engine.Diff) []byte {
	b = append(b, '[')
	for i, d := range diffs {
		if i >= 1000 {
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDiff(b, d)
	}
	return append(b, ']')
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

func (s *adminHandlers) reload(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	if err := s.checker.Reload(r.Context()); err != nil {
		return err
	}
	repaired, err := s.settlements.RepairSettlements(r.Context()) // the tournament module
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, append(appendStrings([]byte(`{"ok":true,"settlements_repaired":`), repaired), '}'))
	return nil
}

// checkContests runs the contests' check, none without contests.
func (s *adminHandlers) checkContests(ctx context.Context) ([]ctf.Problem, error) {
	if s.contests == nil {
		return nil, nil
	}
	return s.contests.Check(ctx)
}
