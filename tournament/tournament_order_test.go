package tournament_test

import (
	"context"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// TestTournamentRefusesBeforeQuota pins the order of the write path's
// checks (engine/hooks.go): the tournament's window and joins (the
// tournament module's ScoreGuard) refuse a score before a quota (the
// limits module's Gate) looks at it, so a player whose quota is used up
// hears why the tournament refuses, and a refused score counts nothing.
func TestTournamentRefusesBeforeQuota(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	te.clock.Set(tStart.Add(time.Minute))
	b := cup("q", tStart.Add(time.Hour), func(tt *podium.Tournament) { tt.JoinRequired = true })
	b.Quota = &podium.Quota{Max: 1}
	te.put(b)
	for range 2 {
		if err := te.submit("q", "a", 5); podium.ErrorCode(err) != podium.ECodeNotJoined {
			t.Fatalf("score before joining: %v, want %s", err, podium.ECodeNotJoined)
		}
	}
	if _, err := tourneyOf(te.eng).Join(ctx, "q", "a"); err != nil {
		t.Fatal(err)
	}
	// The refused scores counted nothing: the quota's one is left.
	if err := te.submit("q", "a", 5); err != nil {
		t.Fatalf("first score after joining: %v", err)
	}
	if err := te.submit("q", "a", 4); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("second score: %v, want %s", err, podium.ECodeQuotaExceeded)
	}
	te.clock.Set(tStart.Add(2 * time.Hour))
	if err := te.submit("q", "a", 3); podium.ErrorCode(err) != podium.ECodeTournamentClosed {
		t.Fatalf("score after the end with the quota used up: %v, want %s", err, podium.ECodeTournamentClosed)
	}
}
