package engine_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkIdempotencyMemory measures the heap an Idempotency-Key request
// leaves behind: b.N keyed single submits (16 at a time, each with its own
// key, as the Go client sends, and a 330-byte answer like a real one), then
// the heap growth per record, live and after a restart that loads the
// records again.
//
//	go test ./engine -run '^$' -bench IdempotencyMemory -benchtime 50000x
func BenchmarkIdempotencyMemory(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "podium.db")
	open := func() (*sqlite.Store, *engine.Engine) {
		st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
		if err != nil {
			b.Fatal(err)
		}
		eng := modules.Engine(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := eng.Start(ctx); err != nil {
			b.Fatal(err)
		}
		return st, eng
	}
	st, eng := open()
	bd := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best}
	if err := bd.Normalize(); err != nil {
		b.Fatal(err)
	}
	if _, _, err := eng.PutBoard(ctx, bd); err != nil {
		b.Fatal(err)
	}
	// One player: the rank index does not grow, only the records do.
	score := []engine.Score{{Board: "b", Player: "p", Keys: []int64{1}}}
	body := []byte(`{"board":"b","period":"all","player":"p","improved":false,"seq":1,"entry":{"rank":1,"player":"p","name":"p","keys":[1],"score":1,"at":"2026-12-01T00:00:00.000Z","seq":1,"meta":{}},"previous":{"rank":1,"player":"p","name":"p","keys":[1],"score":1,"at":"2026-12-01T00:00:00.000Z","seq":1,"meta":{}},"held":null,"reconstructed":false,"x":"0123456789"}` + "\n")
	const scope = "k_4f3c2a1b9e8d7c6b /v1/boards/b/scores"
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	b.ResetTimer()
	var wg sync.WaitGroup
	const workers = 16
	for w := range workers {
		wg.Go(func() {
			for i := w; i < b.N; i += workers {
				key := fmt.Sprintf("%032x", i)
				h := sha256.Sum256([]byte(key))
				claim, prior, err := eng.Idempotency().Claim(ctx, scope, key, h[:])
				if err != nil || prior != nil {
					b.Error(err, prior)
					return
				}
				if _, err := eng.Submit(ctx, score, true, claim); err != nil {
					b.Error(err)
					return
				}
				claim.Finish(200, append([]byte(nil), body...)) // a copy per answer, as http does
			}
		})
	}
	wg.Wait()
	// A last write carries the answers not stored yet.
	if _, err := eng.Submit(ctx, score, true, nil); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	live := heap()
	b.ReportMetric((float64(live)-float64(before))/float64(b.N), "B/record")
	eng.Close()
	st.Close()
	st, eng = open()
	defer st.Close()
	defer eng.Close()
	restarted := heap()
	b.ReportMetric((float64(restarted)-float64(before))/float64(b.N), "B/record-restart")
	runtime.KeepAlive(eng)
}

// BenchmarkIdempotencyClaim measures deciding a key over 100,000 stored
// records: a new key (miss) and a retry (hit, its answer read from
// SQLite), with every record in memory (kept) and with none (budget
// negative: a miss is looked up in the database too). CPU time per op is
// steadier than wall time on a shared machine.
//
//	go test ./engine -run '^$' -bench IdempotencyClaim -benchtime 20000x
func BenchmarkIdempotencyClaim(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "podium.db")
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const scope, n = "k_4f3c2a1b9e8d7c6b /v1/boards/b/scores", 100_000
	hash := func(key string) []byte { h := sha256.Sum256([]byte(key)); return h[:] }
	now := time.Now()
	recs := make([]podium.IdempotencyRecord, 0, 1000)
	for i := range n {
		key := fmt.Sprintf("%032x", i)
		recs = append(recs, podium.IdempotencyRecord{Scope: scope, Key: key, RequestHash: hash(key), Status: 200,
			Body: make([]byte, 330), CreatedAt: now})
		if len(recs) == cap(recs) {
			if err := st.Commit(ctx, &podium.Batch{Idempotency: recs}); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	for _, bc := range []struct {
		name   string
		budget int64
	}{{"kept", 0}, {"none", -1}} {
		eng := modules.Engine(engine.Config{Store: st, IdempotencyBytes: bc.budget, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := eng.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Run("miss/"+bc.name, func(b *testing.B) {
			cpu0 := processCPU(b)
			defer func() { b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op") }()
			for i := range b.N {
				key := fmt.Sprintf("new-%d", i)
				claim, prior, err := eng.Idempotency().Claim(ctx, scope, key, hash(key))
				if err != nil || prior != nil {
					b.Fatal(prior, err)
				}
				claim.Abort()
			}
		})
		b.Run("retry/"+bc.name, func(b *testing.B) {
			cpu0 := processCPU(b)
			defer func() { b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op") }()
			for i := range b.N {
				key := fmt.Sprintf("%032x", i%n)
				_, prior, err := eng.Idempotency().Claim(ctx, scope, key, hash(key))
				if err != nil || prior == nil {
					b.Fatal(prior, err)
				}
			}
		})
		eng.Close()
	}
}
