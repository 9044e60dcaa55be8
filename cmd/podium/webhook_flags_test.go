package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

// TestWebhookBoundFlags: --webhook-outbox-budget and --webhook-retention
// default to the module's defaults; a retention shorter than the retry
// window or a day, or a negative budget, is refused; both come from the
// environment too.
func TestWebhookBoundFlags(t *testing.T) {
	parsed := func(args ...string) (Config, error) {
		var c Config
		fs := newFlagSet("serve", "", io.Discard)
		c.flags(fs)
		return c, parse(fs, args)
	}
	c, err := parsed()
	if err != nil || c.WebhookBudget != webhooks.DefaultBudget || c.WebhookRetention != webhooks.DefaultRetention || c.validate() != nil {
		t.Fatalf("defaults: %d %v (%v, %v)", c.WebhookBudget, c.WebhookRetention, err, c.validate())
	}
	for _, bad := range [][]string{{"--webhook-retention", "23h"}, {"--webhook-retention", "47h", "--webhook-retry-window", "48h"},
		{"--webhook-outbox-budget", "-1"}} {
		if c, err = parsed(bad...); err != nil {
			t.Fatal(err)
		}
		if err := c.validate(); err == nil {
			t.Fatalf("%v was taken", bad)
		}
	}
	if c, err = parsed("--webhook-retention", "48h", "--webhook-retry-window", "48h"); err != nil || c.validate() != nil {
		t.Fatalf("a retention equal to the retry window: %v, %v", err, c.validate())
	}
	t.Setenv("PODIUM_WEBHOOK_OUTBOX_BUDGET", "5000")
	t.Setenv("PODIUM_WEBHOOK_RETENTION", "72h")
	if c, err = parsed(); err != nil || c.WebhookBudget != 5000 || c.WebhookRetention != 72*time.Hour || c.validate() != nil {
		t.Fatalf("from the environment: %d %v (%v)", c.WebhookBudget, c.WebhookRetention, err)
	}
}

// --webhook-period-top past its maximum is a usage error naming the flag.
func TestWebhookPeriodTopFlag(t *testing.T) {
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: t.TempDir(), Sync: "normal", WebhookPeriodTop: webhooks.MaxPeriodTop + 1,
		Shutdown: time.Second}, Stderr: io.Discard}
	err := m.Open(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("a server started with a --webhook-period-top above the maximum")
	}
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--webhook-period-top") {
		t.Errorf("--webhook-period-top too large: %v, want a usage error naming the flag", err)
	}
}
