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
	if err := b.Charge(ctx, "carol", 101<<10); !errors.As(err, &ref) || ref.RetryAfter != time.Minute {
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
	// Prepaid bytes are not charged again.
	b2 := NewBudgets(BudgetConfig{PlayerBytes: ratelimit.Limit{Quota: 10, Window: time.Hour}}, nil)
	if n, err := io.Copy(io.Discard, b2.Meter(context.Background(), "bob", bytes.NewReader(body[:8<<10]), 8<<10)); err != nil || n != 8<<10 {
		t.Fatalf("prepaid: %d %v", n, err)
	}
}
