package engine_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// lookupStore counts the idempotency lookups of a SQLite store, and fails
// them on demand.
type lookupStore struct {
	*sqlite.Store
	lookups atomic.Int64
	fail    atomic.Bool
}

func (s *lookupStore) LookupIdempotency(ctx context.Context, scope, key string) (podium.IdempotencyRecord, bool, error) {
	s.lookups.Add(1)
	if s.fail.Load() {
		return podium.IdempotencyRecord{}, false, errors.New("disk I/O error")
	}
	return s.Store.LookupIdempotency(ctx, scope, key)
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.Gauge != nil {
				return m.Gauge.GetValue()
			}
			return m.Counter.GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestIdempotencyEvictedKeysDecidedByDatabase keeps the records under a
// budget of a few: most keys are evicted from memory. A retry of any key
// must still get its first answer byte for byte (read from the database)
// and apply nothing again, another body must still be a conflict, and
// when the database cannot be read the answer is 503 unavailable with
// nothing applied. The same holds after a restart that loads only what the
// budget holds.
func TestIdempotencyEvictedKeysDecidedByDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "podium.db")
	const budget = 1200 // bytes: a handful of records
	open := func() (*lookupStore, *engine.Engine, *prometheus.Registry) {
		sq, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
		if err != nil {
			t.Fatal(err)
		}
		st := &lookupStore{Store: sq}
		reg := prometheus.NewRegistry()
		eng := modules.Engine(engine.Config{Store: st, IdempotencyBytes: budget, Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := eng.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return st, eng, reg
	}
	st, eng, reg := open()
	b := &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum}
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	const scope, n = "k1 /v1/boards/s/scores", 60
	hash := func(i int) []byte { h := sha256.Sum256(fmt.Appendf(nil, "body %d", i)); return h[:] }
	one := []engine.Score{{Board: "s", Player: "p", Keys: []int64{1}}}
	// submit sends request i (+1 to p) under key i, and returns the prior
	// answer if there was one.
	submit := func(eng *engine.Engine, i int, h []byte) (*podium.IdempotencyRecord, error) {
		claim, prior, err := eng.Idempotency().Claim(ctx, scope, fmt.Sprint("key-", i), h)
		if err != nil || prior != nil {
			return prior, err
		}
		if _, err := eng.Submit(ctx, one, true, claim); err != nil {
			return nil, err
		}
		claim.Finish(200, fmt.Appendf(nil, "answer %d\n", i))
		return nil, nil
	}
	total := func(eng *engine.Engine) int64 {
		t.Helper()
		page, err := eng.Entry(ctx, engine.Query{Board: "s"}, "p")
		if err != nil {
			t.Fatal(err)
		}
		return page.Entries[0].Keys[0]
	}
	for i := range n {
		if prior, err := submit(eng, i, hash(i)); err != nil || prior != nil {
			t.Fatalf("first request %d: %+v %v", i, prior, err)
		}
	}
	// A write without a key carries the answers not stored yet.
	if _, err := eng.Submit(ctx, []engine.Score{{Board: "s", Player: "q", Keys: []int64{1}}}, true, nil); err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, reg, "podium_idempotency_bytes"); got > budget {
		t.Errorf("podium_idempotency_bytes = %v, over the budget %d", got, budget)
	}
	if got := gauge(t, reg, "podium_idempotency_evictions_total"); got == 0 {
		t.Fatal("nothing was evicted: the test does not test eviction")
	}
	retryAll := func(eng *engine.Engine) {
		t.Helper()
		for i := range n {
			prior, err := submit(eng, i, hash(i))
			if err != nil || prior == nil || prior.Status != 200 || string(prior.Body) != fmt.Sprintf("answer %d\n", i) {
				t.Fatalf("retry %d: %+v %v; want its first answer", i, prior, err)
			}
		}
		if _, err := submit(eng, 0, hash(1)); podium.ErrorCode(err) != podium.ECodeConflict {
			t.Fatalf("key 0 with another body: %v, want conflict", err)
		}
		if got := total(eng); got != n {
			t.Fatalf("total %d after the retries, want %d: a retry applied again", got, n)
		}
	}
	retryAll(eng)
	// The database cannot be read: neither an evicted key nor a new one
	// (which might be an evicted one) is decided, and nothing applies.
	st.fail.Store(true)
	for _, i := range []int{0, n - 1, n} {
		if prior, err := submit(eng, i, hash(i)); prior != nil || podium.ErrorCode(err) != podium.ECodeUnavailable {
			t.Fatalf("request %d while lookups fail: %+v %v, want unavailable", i, prior, err)
		}
	}
	if got := total(eng); got != n {
		t.Fatalf("total %d, want %d: a request applied while its key could not be checked", got, n)
	}
	st.fail.Store(false)
	eng.Close()
	st.Close()

	st, eng, _ = open()
	defer st.Close()
	defer eng.Close()
	retryAll(eng)
	if st.lookups.Load() == 0 {
		t.Fatal("no answer was read from the database")
	}
}

// TestIdempotencyMemoryHoldsNoAnswers: once answers are stored, memory
// keeps only what deciding needs. 20,000 keyed requests with 300-byte
// answers must leave well under 300 bytes each on the heap (they left
// ~660 bytes each when every answer stayed in memory for the TTL).
func TestIdempotencyMemoryHoldsNoAnswers(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := modules.Engine(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, _, err := eng.PutBoard(ctx, &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}}); err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const n = 20_000
	body := make([]byte, 300)
	before := heap()
	for i := range n {
		key := fmt.Sprintf("%032x", i)
		h := sha256.Sum256([]byte(key))
		claim, prior, err := eng.Idempotency().Claim(ctx, "k_4f3c2a1b9e8d7c6b /v1/boards/s/scores", key, h[:])
		if err != nil || prior != nil {
			t.Fatal(prior, err)
		}
		claim.Finish(200, append([]byte(nil), body...))
	}
	// A write stores the answers queued so far.
	if _, err := eng.Submit(ctx, []engine.Score{{Board: "s", Player: "p", Keys: []int64{1}}}, true, nil); err != nil {
		t.Fatal(err)
	}
	per := (float64(heap()) - float64(before)) / n
	t.Logf("%.0f heap bytes per record", per)
	if per > 300 {
		t.Fatalf("%.0f heap bytes per Idempotency-Key record, want under 300: answers are kept in memory", per)
	}
}
