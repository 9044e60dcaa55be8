package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

func i64(v int64) *int64 { return &v }

// quotaBoard makes a board with one asc key bounded to [1000, 3600000]
// and a quota of max submissions per period.
func quotaBoard(t testing.TB, eng *engine.Engine, id string, every podium.Every, max int) {
	t.Helper()
	b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc, Min: i64(1000), Max: i64(3_600_000)}},
		Reset: podium.Reset{Every: every}, Quota: &podium.Quota{Max: max}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// race submits n scores of one player at once and returns which were
// accepted and the quota errors of the others; any other error fails t.
func race(t *testing.T, n int, submit func(i int) error) (ok []int, refused []*podium.QuotaError) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := submit(i)
			mu.Lock()
			defer mu.Unlock()
			var qe *podium.QuotaError
			switch {
			case err == nil:
				ok = append(ok, i)
			case errors.As(err, &qe):
				refused = append(refused, qe)
			default:
				t.Errorf("submission %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	return ok, refused
}

// TestQuotaConcurrent: 32 concurrent submissions of one player to a daily
// board with a quota of 3 admit exactly 3, and every refusal says when the
// day ends. Another player has a quota of their own, the next day brings
// a new one, and a restart counts what the log holds.
func TestQuotaConcurrent(t *testing.T) {
	e := newEnv(t)
	quotaBoard(t, e.eng, "daily", podium.Daily, 3)
	ok, refused := race(t, 32, func(i int) error {
		_, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "daily", Player: "alice", Keys: []int64{int64(5000 + i)}}}, true, nil)
		return err
	})
	if len(ok) != 3 || len(refused) != 29 {
		t.Fatalf("accepted %d, refused %d; want 3 and 29", len(ok), len(refused))
	}
	best := int64(5000 + slices.Min(ok)) // of the accepted ones
	midnight := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, qe := range refused {
		if !qe.ResetsAt.Equal(midnight) || qe.RetryAfter != 12*time.Hour || podium.ErrorCode(qe) != podium.ECodeQuotaExceeded {
			t.Fatalf("refusal %v: resets at %v after %v; want %v after 12h", qe, qe.ResetsAt, qe.RetryAfter, midnight)
		}
	}
	if !strings.Contains(refused[0].Error(), `"alice"`) || !strings.Contains(refused[0].Error(), "2026-12-01T00:00:00Z") {
		t.Errorf("message %q does not name the player and the reset", refused[0].Error())
	}
	e.submit("daily", "bob", 4000) // bob's quota is his own

	e.restart() // the count comes back from the log
	if _, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "daily", Player: "alice", Keys: []int64{4000}}}, true, nil); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("after a restart, a 4th submission of the day: %v; want quota_exceeded", err)
	}
	e.submit("daily", "bob", 3900)
	e.submit("daily", "bob", 3800)
	if _, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "daily", Player: "bob", Keys: []int64{3700}}}, true, nil); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("bob's 4th submission of the day: %v; want quota_exceeded", err)
	}

	e.clock.Set(midnight.Add(time.Second)) // a new day, a new quota
	for i := range 3 {
		e.submit("daily", "alice", int64(6000+i))
	}
	if _, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "daily", Player: "alice", Keys: []int64{4000}}}, true, nil); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("4th submission of the next day: %v; want quota_exceeded", err)
	}
	// Yesterday's board holds alice's best of her 3 accepted submissions.
	eq(t, e.top("daily", "2026-11-30"), []string{"1:bob:[3800]", fmt.Sprintf("2:alice:[%d]", best)})
}

// TestQuotaBatchAndBounds: in a batch, items are counted in order and the
// ones over the quota get a per-item error; values outside a key's bounds
// are refused with a message naming the key and the bound, change nothing,
// and do not count against the quota.
func TestQuotaBatchAndBounds(t *testing.T) {
	e := newEnv(t)
	quotaBoard(t, e.eng, "daily", podium.Daily, 2)
	for _, c := range []struct {
		v    int64
		want string
	}{{999, `key "time_ms" must be >= 1000; 999 given`}, {3_600_001, `key "time_ms" must be <= 3600000; 3600001 given`}} {
		_, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "daily", Player: "alice", Keys: []int64{c.v}}}, true, nil)
		if podium.ErrorCode(err) != podium.ECodeUnprocessable || podium.ErrorMessage(err) != c.want {
			t.Fatalf("submit %d: %v; want unprocessable %q", c.v, err, c.want)
		}
	}
	if got := e.top("daily", ""); len(got) != 0 {
		t.Fatalf("refused values changed the board: %v", got)
	}
	scores := []engine.Score{
		{Board: "daily", Player: "alice", Keys: []int64{1}},    // below min: refused, not counted
		{Board: "daily", Player: "alice", Keys: []int64{2000}}, // 1st
		{Board: "daily", Player: "bob", Keys: []int64{2500}},
		{Board: "daily", Player: "alice", Keys: []int64{1500}}, // 2nd
		{Board: "daily", Player: "alice", Keys: []int64{1200}}, // over
	}
	res, err := e.eng.Submit(context.Background(), scores, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	codes := make([]string, len(res))
	for i, r := range res {
		codes[i] = "ok"
		if r.Err != nil {
			codes[i] = podium.ErrorCode(r.Err)
		}
	}
	if want := "[unprocessable ok ok ok quota_exceeded]"; fmt.Sprint(codes) != want {
		t.Fatalf("batch items: %v; want %s", codes, want)
	}
	eq(t, e.top("daily", ""), []string{"1:alice:[1500]", "2:bob:[2500]"})
}

// TestQuotaAllTimeBoardIsPerDay: on a board that never resets, the quota
// counts per day in the board's zone.
func TestQuotaAllTimeBoardIsPerDay(t *testing.T) {
	e := newEnv(t)
	b := &podium.Board{ID: "ever", Keys: []podium.KeyDef{{Name: "pts", Order: podium.Desc}},
		Reset: podium.Reset{Every: podium.Never, TZ: "Asia/Shanghai"}, Quota: &podium.Quota{Max: 2}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	// 12:00 UTC is 20:00 in Shanghai: the day there ends at 16:00 UTC.
	e.submit("ever", "alice", 1)
	e.submit("ever", "alice", 2)
	_, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "ever", Player: "alice", Keys: []int64{3}}}, true, nil)
	var qe *podium.QuotaError
	if !errors.As(err, &qe) || !qe.ResetsAt.Equal(time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)) || qe.RetryAfter != 4*time.Hour {
		t.Fatalf("3rd submission of the day: %v; want a quota error resetting at 16:00 UTC", err)
	}
	e.clock.Set(time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC))
	e.restart() // counted from the log: yesterday's two are outside today
	e.submit("ever", "alice", 3)
	e.submit("ever", "alice", 4)
	if _, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "ever", Player: "alice", Keys: []int64{5}}}, true, nil); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("3rd submission of the next day: %v; want quota_exceeded", err)
	}
	eq(t, e.top("ever", ""), []string{"1:alice:[4]"})
}

// TestQuotaFailedCommitDoesNotCount: a submission whose commit failed was
// not stored, so it does not use the quota.
func TestQuotaFailedCommitDoesNotCount(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := &faultyStore{Store: st}
	now := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	eng := modules.Engine(engine.Config{Store: fs, Now: now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	quotaBoard(t, eng, "daily", podium.Daily, 2)
	submit := func(v int64) error {
		_, err := eng.Submit(ctx, []engine.Score{{Board: "daily", Player: "alice", Keys: []int64{v}}}, true, nil)
		return err
	}
	if err := submit(2000); err != nil {
		t.Fatal(err)
	}
	fs.fail.Store(true)
	for range 3 {
		if err := submit(1500); podium.ErrorCode(err) != podium.ECodeUnavailable {
			t.Fatalf("submit while commits fail: %v; want unavailable", err)
		}
	}
	fs.fail.Store(false)
	if err := submit(1400); err != nil {
		t.Fatalf("2nd stored submission: %v; the failed ones were counted", err)
	}
	if err := submit(1300); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("3rd stored submission: %v; want quota_exceeded", err)
	}
}
