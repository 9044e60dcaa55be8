package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
)

func testSeed(t *testing.T) uint64 {
	s := rand.Uint64()
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("bad SEED %q", v)
		}
	}
	t.Logf("SEED=%d (set SEED to replay)", s)
	return s
}

// TestCrashRecovery writes scores, deletes and partial checkpoints at
// random, then "crashes" (the store closes under the engine, with no final
// checkpoint) and starts again: the rankings must be exactly what was
// acknowledged, and the store must check clean.
func TestCrashRecovery(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 99))
	dir := t.TempDir()
	path := filepath.Join(dir, "podium.db")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The engine's background goroutines (the settle scheduler, the old
	// periods' sweep) read the clock while the test moves it.
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	ctx := context.Background()

	open := func() (*sqlite.Store, *Engine) {
		st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
		if err != nil {
			t.Fatal(err)
		}
		e := New(Config{Store: st, Now: clock, Logger: log})
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return st, e
	}
	st, e := open()
	for _, b := range []*podium.Board{
		{ID: "sum", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum},
		{ID: "best", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}, {Name: "b", Order: podium.Desc}}, Mode: podium.Best},
	} {
		b.Normalize()
		if _, _, err := e.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	for step := 0; step < 600; step++ {
		player := fmt.Sprintf("p%d", r.IntN(25))
		switch x := r.IntN(20); {
		case x == 0:
			max := 1 + r.IntN(5)
			if err := e.send(ctx, &op{kind: opFunc, p: func() { e.pl.checkpoint(max) }}); err != nil {
				t.Fatal(err)
			}
		case x == 1:
			err := e.DeleteEntry(ctx, "sum", "current", player)
			if err != nil && podium.ErrorCode(err) != podium.ECodeEntryNotFound {
				t.Fatal(err)
			}
		case x < 11:
			if _, err := e.Submit(ctx, []Score{{Board: "sum", Player: player, Keys: []int64{int64(r.IntN(7) - 2)}}}, true, nil); err != nil {
				t.Fatal(err)
			}
		default:
			if _, err := e.Submit(ctx, []Score{{Board: "best", Player: player, Keys: []int64{int64(r.IntN(50)), int64(r.IntN(3))}}}, true, nil); err != nil {
				t.Fatal(err)
			}
		}
		if r.IntN(50) == 0 {
			now.Add(int64(time.Millisecond) * int64(r.IntN(3)))
		}
	}
	want := map[string]string{}
	for _, b := range []string{"sum", "best"} {
		want[b] = ranking(t, e, b)
	}
	// Crash: the store goes away under the engine; nothing more reaches it.
	st.Close()
	e.Close()

	st, e = open()
	defer func() { e.Close(); st.Close() }()
	for _, b := range []string{"sum", "best"} {
		if got := ranking(t, e, b); got != want[b] {
			t.Fatalf("board %s after the crash:\n got %s\nwant %s", b, got, want[b])
		}
	}
	if diffs, err := CheckStore(ctx, st); err != nil || len(diffs) != 0 {
		t.Fatalf("CheckStore after recovery: %v %v", diffs, err)
	}
	if diffs, err := e.Checker().Indexes(ctx); err != nil || len(diffs) != 0 {
		t.Fatalf("CheckIndexes after recovery: %v %v", diffs, err)
	}
}

func ranking(t *testing.T, e *Engine, board string) string {
	t.Helper()
	p, err := e.Top(context.Background(), Query{Board: board}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range p.Entries {
		out = append(out, fmt.Sprintf("%d:%s:%v:%d:%d", en.Rank, en.Player, en.Keys, en.At.UnixMilli(), en.Seq))
	}
	sort.Strings(out)
	return fmt.Sprint(p.Seq, out)
}
