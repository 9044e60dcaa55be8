package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// podium serve runs contests: a contest made through the API survives a
// restart, and revoking a key ends its contest streams at once. It talks
// to the server through the Go client, which it keeps honest.
func TestServeContests(t *testing.T) {
	dir := t.TempDir()
	m := testMain(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := client.New(m.URL(), client.WithKey("admin-secret"))
	now := time.Now().UTC()
	if _, created, err := admin.PutContest(ctx, "quals", client.ContestSpec{Title: "Quals", Start: now.Add(-time.Hour), End: now.Add(time.Hour)}); err != nil || !created {
		t.Fatalf("PUT contest: %v created %v", err, created)
	}
	if _, created, err := admin.PutChallenge(ctx, "quals", "web", client.ChallengeSpec{Scoring: client.Scoring{Value: 100}}); err != nil || !created {
		t.Fatalf("PUT challenge: %v created %v", err, created)
	}
	if a, err := admin.Attempt(ctx, "quals", "alice", "web", true); err != nil || a.Attempt.Result != "solved" {
		t.Fatalf("attempt: %v %+v", err, a)
	}
	k, err := admin.CreateKey(ctx, client.APIKeySpec{Name: "viewer", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}

	// A viewer follows the contest with the key; revoking the key ends
	// the open stream with an unauthenticated error event, which ends the
	// watch for good (without a reconnect, which a 401 would also end).
	var snapshots int
	var statuses []string
	opts := client.WatchOptions{OnStatus: func(s client.Status) { statuses = append(statuses, s.State) }}
	err = admin.WithKey(k.Key).WatchContest(ctx, "quals", opts, func(s client.State, u client.Update) {
		if u.Type == "snapshot" {
			snapshots++
		}
		if len(s.Entries) != 1 || s.Entries[0].Player != "alice" {
			t.Errorf("contest window: %+v", s.Entries)
		}
		if snapshots == 1 && u.Initial {
			if err := admin.DeleteKey(ctx, k.ID); err != nil {
				t.Errorf("revoke: %v", err)
			}
		}
	})
	if !errors.Is(err, client.ErrUnauthenticated) || client.StatusOf(err) != 0 || snapshots != 1 || len(statuses) != 2 || statuses[1] != "live" {
		t.Fatalf("after the revocation: %v (%d snapshots, statuses %q)", err, snapshots, statuses)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = testMain(t, dir)
	defer m.Close()
	if st, err := client.New(m.URL(), client.WithKey("admin-secret")).Standings(ctx, "quals", client.StandingsOptions{}); err != nil || st.Total != 1 {
		t.Fatalf("after a restart: %v %+v", err, st)
	}
}
