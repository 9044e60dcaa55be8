package modules_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// counter is a module written for this test alone: it counts, per board,
// the scores the writer logs. It proves that a feature is added by its own
// code plus one registration line, with no change to the core, and that
// the hooks run in their documented order: the bounds of the standard
// modules refuse first, so a refused score is never seen as logged.
type counter struct {
	admitted map[string]int
	logged   map[string]int
}

func (c *counter) Name() string { return "counter" }

func (c *counter) Admit(cand *engine.Candidate) error {
	c.admitted[cand.Def.ID]++
	return nil
}

func (c *counter) Logged(cand *engine.Candidate) { c.logged[cand.Def.ID]++ }

func TestModuleAddedByRegistration(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := &counter{admitted: map[string]int{}, logged: map[string]int{}}
	eng := engine.New(engine.Config{Store: st, Logger: log,
		Modules: append(modules.All(st, log), c)}) // the one registration line
	ctx := context.Background()
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	min, max := int64(0), int64(100)
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "pts", Order: podium.Desc, Min: &min, Max: &max}},
		Quota: &podium.Quota{Max: 3}, Reset: podium.Reset{Every: podium.Daily}}
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	scores := []engine.Score{
		{Board: "b", Player: "p", Keys: []int64{10}},
		{Board: "b", Player: "p", Keys: []int64{101}}, // out of bounds: refused before any gate
		{Board: "b", Player: "p", Keys: []int64{20}},
		{Board: "b", Player: "q", Keys: []int64{5}},
		{Board: "b", Player: "p", Keys: []int64{30}},
		{Board: "b", Player: "p", Keys: []int64{40}}, // over the quota: admitted by no gate after limits
	}
	res, err := eng.Submit(ctx, scores, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, r := range res {
		code := "ok"
		if r.Err != nil {
			code = podium.ErrorCode(r.Err)
		}
		codes = append(codes, code)
	}
	if got, want := fmt.Sprint(codes), "[ok unprocessable ok ok ok quota_exceeded]"; got != want {
		t.Fatalf("codes %s; want %s", got, want)
	}
	// limits is registered before counter, so the score over the quota
	// never reaches counter's Admit; the out-of-bounds one reaches no gate.
	if c.admitted["b"] != 4 || c.logged["b"] != 4 {
		t.Fatalf("counter saw %d admitted, %d logged; want 4 and 4", c.admitted["b"], c.logged["b"])
	}
}
