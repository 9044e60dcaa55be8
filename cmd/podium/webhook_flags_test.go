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
