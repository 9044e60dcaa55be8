package lograte_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/lograte"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func lines(b *bytes.Buffer) []string {
	s := strings.TrimSpace(b.String())
	b.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestRepeatsOncePerInterval: on a fake clock, an error repeated 1000
// times in an interval is written once, and the first one after the
// interval says how many were dropped; another message, another level
// and info lines are not held back by it.
func TestRepeatsOncePerInterval(t *testing.T) {
	var out bytes.Buffer
	clk := &clock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	text := slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	log := slog.New(lograte.New(text, 10*time.Second, slog.LevelWarn, clk.now)).With("component", "store")

	for i := range 1000 {
		log.Error("commit failed", "i", i)
		clk.t = clk.t.Add(time.Millisecond) // 1 s in all
	}
	log.Error("another failure")
	log.Warn("commit failed")
	log.Info("served", "n", 1)
	log.Info("served", "n", 2)
	got := lines(&out)
	want := []string{
		`level=ERROR msg="commit failed" component=store i=0`,
		`level=ERROR msg="another failure" component=store`,
		`level=WARN msg="commit failed" component=store`,
		`level=INFO msg=served component=store n=1`,
		`level=INFO msg=served component=store n=2`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("within the interval:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	clk.t = clk.t.Add(9 * time.Second) // 10 s after the first: a new interval
	log.Error("commit failed", "i", 1000)
	log.Error("commit failed", "i", 1001)
	if got := lines(&out); len(got) != 1 || got[0] != `level=ERROR msg="commit failed" component=store i=1000 suppressed=999` {
		t.Fatalf("after the interval: %q", got)
	}
	clk.t = clk.t.Add(time.Minute)
	log.Error("commit failed", "i", 1002)
	if got := lines(&out); len(got) != 1 || got[0] != `level=ERROR msg="commit failed" component=store i=1002 suppressed=1` {
		t.Fatalf("a minute later: %q", got)
	}
}

// TestZeroIntervalPassesAll: every <= 0 turns the limit off.
func TestZeroIntervalPassesAll(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(lograte.New(slog.NewTextHandler(&out, nil), 0, slog.LevelWarn, nil))
	for range 5 {
		log.Error("same")
	}
	if n := len(lines(&out)); n != 5 {
		t.Fatalf("%d lines, want 5", n)
	}
}
