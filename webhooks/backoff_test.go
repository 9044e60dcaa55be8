package webhooks_test

import (
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

func TestBackoff(t *testing.T) {
	lo := webhooks.Backoff{Base: time.Second, Max: 8 * time.Second, Window: time.Hour, Rand: func() float64 { return 0 }}
	hi := lo
	hi.Rand = func() float64 { return 0.999999 }
	for attempts, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 9: 8 * time.Second, 1000: 8 * time.Second} {
		if d := lo.Delay(attempts); d != want/2 {
			t.Errorf("Delay(%d) at the low jitter = %v, want %v", attempts, d, want/2)
		}
		if d := hi.Delay(attempts); d <= want*99/100 || d > want {
			t.Errorf("Delay(%d) at the high jitter = %v, want just under %v", attempts, d, want)
		}
	}
	born := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if next, ok := lo.Next(1, born, born.Add(time.Minute)); !ok || !next.Equal(born.Add(time.Minute+time.Second/2)) {
		t.Errorf("Next(1) = %v, %v", next, ok)
	}
	// The last retry is at the window's end, and a failure then is final.
	if next, ok := hi.Next(5, born, born.Add(time.Hour-time.Second)); !ok || !next.Equal(born.Add(time.Hour)) {
		t.Errorf("Next near the window's end = %v, %v; want the end", next, ok)
	}
	if _, ok := lo.Next(6, born, born.Add(time.Hour)); ok {
		t.Error("Next at the window's end: ok, want failed")
	}
	// The defaults: a 24h window.
	var def webhooks.Backoff
	if _, ok := def.Next(1, born, born.Add(24*time.Hour-time.Second)); !ok {
		t.Error("default window shorter than 24h")
	}
	if _, ok := def.Next(1, born, born.Add(24*time.Hour)); ok {
		t.Error("default window longer than 24h")
	}
}
