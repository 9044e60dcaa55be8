package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
)

// TestIdempotencyModel sends keyed requests at random (new keys, retries
// with the same body or another one) under a small memory budget, with
// the clock jumping past the TTL, prunes and restarts in between, and
// checks every answer against a model: a live key gets its first answer
// byte for byte or a conflict, never a second application; a pruned key
// applies again. SEED replays a run.
func TestIdempotencyModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 17))
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "podium.db")
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	const ttl = 48 * time.Hour
	var st *sqlite.Store
	var e *Engine
	open := func() {
		var err error
		if st, err = sqlite.Open(path, sqlite.Options{Sync: "normal"}); err != nil {
			t.Fatal(err)
		}
		budget := []int64{-1, 300, 1000, 4000, 0}[rng.IntN(5)]
		e = New(Config{Store: st, Now: clock, IdempotencyBytes: budget, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	closeAll := func() { e.Close(); st.Close() }
	open()
	defer func() { closeAll() }()
	if _, _, err := e.PutBoard(ctx, &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum}); err != nil {
		t.Fatal(err)
	}
	type live struct {
		body    int
		answer  string
		created time.Time
	}
	model := map[int]live{}
	applied := int64(0)
	const scope = "k1 /v1/boards/s/scores"
	for step := range 600 {
		switch r := rng.IntN(100); {
		case r < 85: // a request
			k, body := rng.IntN(40), rng.IntN(2)
			h := sha256.Sum256(fmt.Appendf(nil, "%d/%d", k, body))
			claim, prior, err := e.Idempotency().Claim(ctx, scope, fmt.Sprint("key-", k), h[:])
			want, isLive := model[k]
			switch {
			case isLive && want.body != body:
				if podium.ErrorCode(err) != podium.ECodeConflict {
					t.Fatalf("step %d: key %d with another body: %+v %v, want conflict", step, k, prior, err)
				}
			case isLive:
				if err != nil || prior == nil || prior.Status != 200 || string(prior.Body) != want.answer {
					t.Fatalf("step %d: retry of key %d: %+v %v, want %q", step, k, prior, err, want.answer)
				}
			default:
				if err != nil || prior != nil {
					t.Fatalf("step %d: new key %d: %+v %v, want a claim", step, k, prior, err)
				}
				if _, err := e.Submit(ctx, []Score{{Board: "s", Player: "p", Keys: []int64{1}}}, true, claim); err != nil {
					t.Fatal(err)
				}
				applied++
				ans := fmt.Sprintf("answer %d at step %d\n", k, step)
				claim.Finish(200, []byte(ans))
				model[k] = live{body, ans, clock()}
			}
		case r < 90: // store the answers queued so far
			if _, err := e.Submit(ctx, []Score{{Board: "s", Player: "q", Keys: []int64{1}}}, true, nil); err != nil {
				t.Fatal(err)
			}
		case r < 96: // time passes, and the expired records are pruned
			// Answers are stored within a second; a jump of the clock
			// must not overtake them (an answer not stored yet holds the
			// prune back, so the model would not know what was pruned).
			if _, err := e.Submit(ctx, []Score{{Board: "s", Player: "q", Keys: []int64{1}}}, true, nil); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			now = now.Add([]time.Duration{time.Minute, time.Hour, 20 * time.Hour, 47 * time.Hour}[rng.IntN(4)])
			cut := now.Add(-ttl)
			mu.Unlock()
			e.idem.mu.Lock()
			e.idem.pruned = time.Time{}
			e.idem.mu.Unlock()
			e.idem.prune()
			for k, l := range model {
				if podium.Millis(l.created) < podium.Millis(cut) {
					delete(model, k)
				}
			}
		default:
			closeAll()
			open()
		}
	}
	page, err := e.Entry(ctx, Query{Board: "s"}, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := page.Entries[0].Keys[0]; got != applied {
		t.Fatalf("total %d, want %d applications", got, applied)
	}
}
