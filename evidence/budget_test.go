package evidence

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/podiumhq/podium/ratelimit"
)

func TestAcquire(t *testing.T) {
	b := NewBudgets(BudgetConfig{PlayerConcurrent: 1, GlobalConcurrent: 2}, nil)
	r1, err := b.Acquire("alice")
	if err != nil {
		t.Fatal(err)
	}
	var ref *Refusal
	if _, err := b.Acquire("alice"); !errors.As(err, &ref) || ref.Budget != "player_concurrency" || ref.RetryAfter <= 0 {
		t.Fatalf("second upload of alice: %v", err)
	}
	r2, err := b.Acquire("bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire("carol"); !errors.As(err, &ref) || ref.Budget != "global_concurrency" {
		t.Fatalf("third upload: %v", err)
	}
	r1()
	r1() // twice is harmless
	if _, err := b.Acquire("carol"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
}

func TestCharge(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lim := ratelimit.New(ratelimit.Config{Now: func() time.Time { return now }})
	b := NewBudgets(BudgetConfig{PlayerBytes: ratelimit.Limit{Quota: 100, Window: time.Minute},
		GlobalBytes: ratelimit.Limit{Quota: 150, Window: time.Minute}}, lim)
	ctx := context.Background()
	if err := b.Charge(ctx, "alice", 90<<10); err != nil {
		t.Fatal(err)
	}
	var ref *Refusal
	if err := b.Charge(ctx, "alice", 20<<10); !errors.As(err, &ref) || ref.Budget != "player_bytes" || ref.RetryAfter < 5*time.Second {
		t.Fatalf("alice past her budget: %v", err)
	}
	if err := b.Charge(ctx, "bob", 70<<10); !errors.As(err, &ref) || ref.Budget != "global_bytes" {
		t.Fatalf("bob past the global budget: %v", err)
	}
	if err := b.Charge(ctx, "carol", 151<<10); !errors.As(err, &ref) || ref.RetryAfter != time.Minute {
		t.Fatalf("more than a whole bucket: %v", err)
	}
	now = now.Add(time.Minute)
	if err := b.Charge(ctx, "alice", 20<<10); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}

// TestMeter: a body without a declared length is charged as it is read,
// ahead of the bytes, and cut when the budget refuses.
func TestMeter(t *testing.T) {
	b := NewBudgets(BudgetConfig{PlayerBytes: ratelimit.Limit{Quota: 200, Window: time.Hour}, GlobalBytes: ratelimit.Limit{Quota: 1 << 20, Window: time.Hour}}, nil)
	body := bytes.Repeat([]byte("x"), 300<<10)
	n, err := io.Copy(io.Discard, b.Meter(context.Background(), "alice", bytes.NewReader(body), 0))
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Budget != "player_bytes" {
		t.Fatalf("err %v", err)
	}
	if n != 200<<10 { // four steps of 50 KiB (a quarter of the budget) paid, the fifth refused
		t.Fatalf("read %d bytes", n)
	}
	// A declared length is charged step by step, never past it: 8 KiB
	// declared fit a budget of 10 KiB.
	b2 := NewBudgets(BudgetConfig{PlayerBytes: ratelimit.Limit{Quota: 10, Window: time.Hour}}, nil)
	if n, err := io.Copy(io.Discard, b2.Meter(context.Background(), "bob", bytes.NewReader(body[:8<<10]), 8<<10)); err != nil || n != 8<<10 {
		t.Fatalf("declared: %d %v", n, err)
	}
}

// remaining is what a byte budget has left, in KiB.
func remaining(lim *ratelimit.Limiter, key string, l ratelimit.Limit) int {
	return lim.Take(context.Background(), "test", key, l, 0).Remaining
}

// TestRefusalChargesNothing (issue 17 item 15): the global budget is
// taken first, and a refusal by either budget leaves both as they were:
// a spent global budget does not drain the player's, a spent player's
// budget does not drain the global one.
func TestRefusalChargesNothing(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lim := ratelimit.New(ratelimit.Config{Now: func() time.Time { return now }})
	pl, gl := ratelimit.Limit{Quota: 100, Window: time.Minute}, ratelimit.Limit{Quota: 150, Window: time.Minute}
	b := NewBudgets(BudgetConfig{PlayerBytes: pl, GlobalBytes: gl}, lim)
	ctx := context.Background()
	if err := b.Charge(ctx, "alice", 90<<10); err != nil {
		t.Fatal(err)
	}
	var ref *Refusal
	if err := b.Charge(ctx, "alice", 20<<10); !errors.As(err, &ref) || ref.Budget != "player_bytes" {
		t.Fatalf("alice past her budget: %v", err)
	}
	if got := remaining(lim, "evidence:global", gl); got != 60 {
		t.Fatalf("a player's refusal drained the global budget: %d KiB left, want 60", got)
	}
	if err := b.Charge(ctx, "bob", 70<<10); !errors.As(err, &ref) || ref.Budget != "global_bytes" {
		t.Fatalf("bob past the global budget: %v", err)
	}
	if got := remaining(lim, "evidence:player:bob", pl); got != 100 {
		t.Fatalf("a global refusal drained bob's budget: %d KiB left, want 100", got)
	}
}

// TestMeterSettles (issue 17 item 15): what is charged ahead and not read
// is given back. Two bodies that declare 1 MB and send 20 bytes cost 1 KiB
// each, and another player's real upload still fits.
func TestMeterSettles(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lim := ratelimit.New(ratelimit.Config{Now: func() time.Time { return now }})
	gl := ratelimit.Limit{Quota: 2 << 10, Window: time.Minute} // 2 MiB a minute
	b := NewBudgets(BudgetConfig{PlayerBytes: ratelimit.Limit{Quota: 2 << 10, Window: time.Minute}, GlobalBytes: gl}, lim)
	ctx := context.Background()
	for _, p := range []string{"mallory", "mallory2"} {
		m := b.Meter(ctx, p, bytes.NewReader(bytes.Repeat([]byte("x"), 20)), 1<<20)
		if n, err := io.Copy(io.Discard, m); n != 20 || err != nil {
			t.Fatalf("read %d, %v", n, err)
		}
		m.Settle()
	}
	if got := remaining(lim, "evidence:global", gl); got != 2<<10-2 {
		t.Fatalf("global budget after two 20-byte bodies declaring 1 MB: %d KiB left, want %d", got, 2<<10-2)
	}
	real := bytes.Repeat([]byte("y"), 1<<20)
	m := b.Meter(ctx, "alice", bytes.NewReader(real), int64(len(real)))
	if n, err := io.Copy(io.Discard, m); n != int64(len(real)) || err != nil {
		t.Fatalf("alice's real upload: %d, %v", n, err)
	}
	m.Settle()
	// A body cut half-way keeps only what was read: 100 KiB of a declared
	// 1 MiB.
	before := remaining(lim, "evidence:global", gl)
	m = b.Meter(ctx, "carol", io.LimitReader(bytes.NewReader(real), 100<<10), int64(len(real)))
	io.Copy(io.Discard, m)
	m.Settle()
	if got := remaining(lim, "evidence:global", gl); got != before-100 {
		t.Fatalf("a body cut at 100 KiB cost %d KiB", before-got)
	}
}
