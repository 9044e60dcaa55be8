package http_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// TestLostAnswerIsReconstructedHonestly: podium stopped after a request's
// writes were committed but before its answer was stored. The retry with
// the same Idempotency-Key applies nothing again and says the answer is
// rebuilt; its seq is the request's own (not that of a later change to the
// entry), its improved flag the one computed then. Before, the rebuilt
// answer claimed the entry's latest seq and improved: true.
func TestLostAnswerIsReconstructedHonestly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "podium.db")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	eng := modules.Engine(engine.Config{Store: st, Logger: log})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.PutBoard(ctx, &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}}, Public: true}); err != nil {
		t.Fatal(err)
	}
	body := `{"player":"a","score":50}`
	hash := sha256.Sum256([]byte(body))
	claim, prior, err := eng.Idempotency().Claim(ctx, "admin /v1/boards/b/scores", "lost", hash[:])
	if err != nil || prior != nil {
		t.Fatal(prior, err)
	}
	res, err := eng.Submit(ctx, []engine.Score{{Board: "b", Player: "a", Keys: []int64{50}}}, true, claim)
	if err != nil {
		t.Fatal(err)
	}
	lost := res[0]
	// Not finished: the answer is lost. Later, a better time moves the
	// entry on, and a worse one leaves it.
	for _, k := range []int64{40, 45} {
		if _, err := eng.Submit(ctx, []engine.Score{{Board: "b", Player: "a", Keys: []int64{k}}}, true, nil); err != nil {
			t.Fatal(err)
		}
	}
	eng.Close()
	st.Close()

	st, err = sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	eng = modules.Engine(engine.Config{Store: st, Logger: log})
	eng.Keys().SetAdminSecret(adminKey)
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log})
	eng.SetListener(srv.Hub())
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Hub().Close(); ts.Close(); eng.Close(); st.Close() })
	s := &server{t: t, url: ts.URL, eng: eng}

	r := s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, body, "Idempotency-Key", "lost"))
	if r.header.Get("Idempotent-Replayed") != "true" || r.header.Get("Idempotent-Reconstructed") != "true" {
		t.Fatalf("headers: %v", r.header)
	}
	var got struct {
		Seq           uint64 `json:"seq"`
		Improved      bool   `json:"improved"`
		Reconstructed bool   `json:"reconstructed"`
		Entry         struct {
			Keys []int64 `json:"keys"`
			Seq  uint64  `json:"seq"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Seq != lost.Seq || got.Improved != lost.Improved || !got.Reconstructed || got.Entry.Keys[0] != 40 || got.Entry.Seq == lost.Seq {
		t.Fatalf("rebuilt answer %s; the lost one had seq %d improved %v", r.body, lost.Seq, lost.Improved)
	}
	top := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if top["seq"] != float64(3) {
		t.Fatalf("the retry applied something: %v", top)
	}
}
