package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/sqlite"
)

// podium check recomputes the contests' snapshots from their solves and
// reports one that differs.
func TestCheckContests(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	now := t0.Add(30 * time.Minute)
	svc := ctf.New(ctf.Config{Store: st, Players: noPlayers{}, Now: func() time.Time { return now }, Poll: -1})
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, _, err := svc.PutContest(ctx, &contest.Contest{ID: "ctf", Start: t0, End: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: "web", Scoring: contest.Scoring{Value: 100}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Attempt(ctx, "ctf", "alice", "web", true, "judge", ""); err != nil {
		t.Fatal(err)
	}
	if err := svc.TakeSnapshots(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n, err := checkContests(ctx, &out, st, "contests"); err != nil || n != 0 {
		t.Fatalf("clean: %d problems, %v\n%s", n, err, out.String())
	}
	// A snapshot whose standings the solves do not give.
	bad := `{"at":"2026-12-05T10:31:00Z","seq":1,"first_blood":[0,0,0],"hidden":[],"standings":[{"rank":1,"team":"alice","score":150,"solved":1,"last_solve_at":"2026-12-05T10:30:00Z"}],"challenges":[{"id":"web","solves":1,"value":100,"first_bloods":["alice"],"scoring":{"function":"static","value":100}}]}`
	if _, err := st.PutSnapshot(ctx, "ctf", t0.Add(31*time.Minute), 1, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	n, err := checkContests(ctx, &out, st, "contests")
	if err != nil || n != 1 || !strings.Contains(out.String(), "FAIL  contests") || !strings.Contains(out.String(), "alice with 150 points") {
		t.Fatalf("corrupted: %d problems, %v\n%s", n, err, out.String())
	}
}
