package ctf

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/sqlite"
)

var ctx = context.Background()

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// players is a Players with a settable hidden set, and a version that
// moves with it.
type players struct {
	mu     sync.Mutex
	hidden map[string]bool
	ver    uint64
}

// versionless hides players' version from the service.
type versionless struct{ p *players }

func (v versionless) Player(id string) (podium.Player, error) { return v.p.Player(id) }

func (p *players) PlayersVersion() uint64 { p.mu.Lock(); defer p.mu.Unlock(); return p.ver }

func (p *players) Player(id string) (podium.Player, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return podium.Player{ID: id, Name: id, Hidden: p.hidden[id]}, nil
}

func (p *players) hide(id string) { p.setHidden(id, true) }

func (p *players) setHidden(id string, h bool) {
	p.mu.Lock()
	p.hidden[id] = h
	p.ver++
	p.mu.Unlock()
}

func newService(t *testing.T, st contest.Store, clk *clock, pl *players) *Service {
	t.Helper()
	s := New(Config{Store: st, Players: pl, Now: clk.now, Poll: -1})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func setup(t *testing.T, s *Service) {
	t.Helper()
	freeze := t0.Add(90 * time.Minute)
	if _, created, err := s.PutContest(ctx, &contest.Contest{ID: "ctf", Title: "Finals", Start: t0, End: t0.Add(2 * time.Hour),
		Freeze: &freeze, FirstBlood: [3]int64{10, 5, 3}, Public: true}); err != nil || !created {
		t.Fatalf("PutContest: %v %v", created, err)
	}
	for _, ch := range []contest.Challenge{
		{Contest: "ctf", ID: "web", Category: "web", Scoring: contest.Scoring{Function: contest.CTFdLogarithmic, Value: 500, Minimum: 100, Decay: 10}},
		{Contest: "ctf", ID: "pwn", Category: "pwn", Scoring: contest.Scoring{Value: 300}},
	} {
		if _, _, err := s.PutChallenge(ctx, &ch); err != nil {
			t.Fatal(err)
		}
	}
}

func lines(b *Board) string {
	var out []string
	for _, t := range b.Standings.Teams {
		if !t.Hidden {
			out = append(out, fmt.Sprintf("%d:%s:%d", t.Rank, t.Team, t.Score))
		}
	}
	return fmt.Sprint(out)
}

func TestAttemptsAndViews(t *testing.T) {
	clk, pl := &clock{t: t0.Add(-time.Hour)}, &players{hidden: map[string]bool{}}
	store := openSQLite(t)
	s := newService(t, store, clk, pl)
	setup(t, s)
	try := func(team, ch string, correct bool) (Outcome, error) {
		return s.Attempt(ctx, "ctf", team, ch, correct, "judge", "")
	}

	if _, err := try("a", "web", true); podium.ErrorCode(err) != podium.ECodeUnprocessable {
		t.Fatalf("attempt before the start = %v, want unprocessable", err)
	}
	clk.set(t0.Add(10 * time.Minute))
	if _, err := try("a", "crypto", true); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("attempt on an unknown challenge = %v, want not_found", err)
	}
	if _, err := s.Attempt(ctx, "nope", "a", "web", true, "judge", ""); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("attempt on an unknown contest = %v", err)
	}
	if o, err := try("a", "web", false); err != nil || o.Attempt.Result != contest.ResultWrong || o.Standing != nil {
		t.Fatalf("wrong attempt: %+v, %v", o, err)
	}
	pl.hide("staff")
	if _, err := try("staff", "web", true); err != nil {
		t.Fatal(err)
	}
	o, err := try("a", "web", true)
	if err != nil || o.Attempt.Seq != 2 || o.Standing == nil || o.Standing.Rank != 1 || o.Standing.Score != 550 || o.Value != 500 || o.Solves != 1 {
		t.Fatalf("first visible solve: %+v %+v, %v", o, o.Standing, err)
	}
	if _, err := try("a", "web", true); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("second solve = %v, want conflict", err)
	}
	clk.set(t0.Add(20 * time.Minute))
	try("b", "pwn", true)
	clk.set(t0.Add(100 * time.Minute)) // after the freeze
	try("b", "web", true)
	try("c", "web", true)

	live, _ := s.Standings("ctf", Live)
	// web: 3 visible solves, 484; a 484+48, b 300+30+484+24, c 484+15.
	if got, want := lines(live), "[1:b:838 2:a:532 3:c:499]"; got != want {
		t.Fatalf("live %s, want %s", got, want)
	}
	pub, _ := s.Standings("ctf", Public)
	// At the freeze: web had 1 visible solve (500), pwn 1.
	if got, want := lines(pub), "[1:a:550 2:b:330]"; got != want || !pub.Frozen {
		t.Fatalf("public %s (frozen %v), want %s", got, pub.Frozen, want)
	}
	// Hiding a team after the fact takes it out at once.
	pl.hide("c")
	live, _ = s.Standings("ctf", Live)
	if got, want := lines(live), "[1:b:851 2:a:546]"; got != want {
		t.Fatalf("live after hiding c %s, want %s", got, want)
	}
	clk.set(t0.Add(3 * time.Hour))
	if _, err := try("d", "web", true); podium.ErrorCode(err) != podium.ECodeUnprocessable {
		t.Fatalf("attempt after the end = %v", err)
	}
	if pub, _ := s.Standings("ctf", Public); !pub.Frozen {
		t.Fatal("the public board thawed before the contest was revealed")
	}
	if _, err := s.Unfreeze(ctx, "ctf", false); err != nil {
		t.Fatal(err)
	}
	pub, _ = s.Standings("ctf", Public)
	if got, want := lines(pub), "[1:b:851 2:a:546]"; got != want || pub.Frozen {
		t.Fatalf("revealed %s (frozen %v), want %s", got, pub.Frozen, want)
	}
	// The audit log has every attempt, refused ones too, in order.
	log, err := s.Attempts(ctx, "ctf", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range log {
		got = append(got, a.Team+"/"+a.Challenge+"/"+a.Result)
	}
	if fmt.Sprint(got) != "[a/web/closed a/crypto/unknown_challenge a/web/wrong staff/web/solved a/web/solved a/web/duplicate "+
		"b/pwn/solved b/web/solved c/web/solved d/web/closed]" {
		t.Fatalf("audit log %v", got)
	}
	// A restarted service loads the same state.
	s.Close()
	s2 := newService(t, store, clk, pl)
	pub2, _ := s2.Standings("ctf", Public)
	if lines(pub2) != lines(pub) || !s2.mustContest(t, "ctf").Revealed {
		t.Fatalf("after restart %s, want %s", lines(pub2), lines(pub))
	}
}

func (s *Service) mustContest(t *testing.T, id string) contest.Contest {
	t.Helper()
	c, err := s.Contest(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSnapshotsAndCheck(t *testing.T) {
	clk, pl := &clock{t: t0}, &players{hidden: map[string]bool{}}
	store := openSQLite(t)
	s := newService(t, store, clk, pl)
	other := newService(t, store, clk, pl) // a second node on the same database
	setup(t, s)
	other.Sync(ctx)
	for i, team := range []string{"a", "b", "c", "d"} {
		clk.set(t0.Add(time.Duration(3*i+1) * time.Minute))
		if _, err := s.Attempt(ctx, "ctf", team, "web", true, "judge", ""); err != nil {
			t.Fatal(err)
		}
	}
	clk.set(t0.Add(11 * time.Minute))
	for _, n := range []*Service{s, other, s} {
		if err := n.TakeSnapshots(ctx); err != nil {
			t.Fatal(err)
		}
	}
	times, _ := s.SnapshotTimes(ctx, "ctf")
	// 10:05 and 10:10 are due, stored once each.
	if len(times) != 2 || !times[0].Equal(t0.Add(5*time.Minute)) || !times[1].Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("snapshots at %v", times)
	}
	snap, err := s.Snapshot(ctx, "ctf", t0.Add(7*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// Before 10:05: a (10:01) and b (10:04) solved web: 496 each + bonus.
	if len(snap.Standings) != 2 || snap.Standings[0].Team != "a" || snap.Standings[0].Score != 496+50 || snap.Seq != 2 {
		t.Fatalf("snapshot %+v", snap)
	}
	clk.set(t0.Add(3 * time.Hour))
	if err := s.TakeSnapshots(ctx); err != nil {
		t.Fatal(err)
	}
	times, _ = s.SnapshotTimes(ctx, "ctf")
	if len(times) != 24 || !times[23].Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("%d snapshots, last %v; want 23 every 5 minutes and the end", len(times), times[len(times)-1])
	}
	if ps, err := s.Check(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Check = %v, %v; want no problem", ps, err)
	}
	// A snapshot that does not match the solves is reported.
	bad := `{"at":"2026-12-05T09:59:00Z","seq":0,"first_blood":[10,5,3],"hidden":[],"standings":[{"rank":1,"team":"z","score":5,"solved":1,"last_solve_at":null}],"challenges":[]}`
	if _, err := store.PutSnapshot(ctx, "ctf", t0.Add(-time.Minute), 0, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	ps, err := s.Check(ctx)
	if err != nil || len(ps) != 1 || ps[0].Contest != "ctf" {
		t.Fatalf("Check = %+v, %v; want the bad snapshot", ps, err)
	}
	t.Log(ps[0].What)
}

// Check reports memory that differs from the database's solves, and a
// contest head that does not end its solves.
func TestCheckMemoryAndHead(t *testing.T) {
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	path := filepath.Join(t.TempDir(), "podium.db")
	store, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s := newService(t, store, clk, pl)
	setup(t, s)
	for _, team := range []string{"a", "b"} {
		if _, err := s.Attempt(ctx, "ctf", team, "web", true, "judge", ""); err != nil {
			t.Fatal(err)
		}
	}
	if ps, err := s.Check(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Check = %v, %v", ps, err)
	}
	st, _ := s.get("ctf")
	st.mu.Lock()
	st.solves[1].Team = "mallory"
	st.mu.Unlock()
	ps, err := s.Check(ctx)
	if err != nil || len(ps) != 1 || !strings.Contains(ps[0].What, "solve 2 in memory (mallory") {
		t.Fatalf("Check with a changed solve in memory = %+v, %v", ps, err)
	}
	st.mu.Lock()
	st.solves[1].Team = "b"
	st.mu.Unlock()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE contests SET seq = 7 WHERE id = 'ctf'"); err != nil {
		t.Fatal(err)
	}
	ps, err = s.Check(ctx)
	if err != nil || len(ps) != 1 || !strings.Contains(ps[0].What, "head is at seq 7") {
		t.Fatalf("Check with a wrong head = %+v, %v", ps, err)
	}
}

// BenchmarkAttempt is one solve through the service on SQLite (sync
// normal): the database transaction under the contest's lock, then the
// live standings of the solver.
func BenchmarkAttempt(b *testing.B) {
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := New(Config{Store: st, Players: pl, Now: clk.now, Poll: -1})
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.PutContest(ctx, &contest.Contest{ID: "ctf", Start: t0, End: t0.Add(48 * time.Hour)}); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		ch := contest.Challenge{Contest: "ctf", ID: fmt.Sprintf("c%d", i), Scoring: contest.Scoring{Function: contest.RCTF, Value: 500, Minimum: 100}}
		if _, _, err := s.PutChallenge(ctx, &ch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Attempt(ctx, "ctf", fmt.Sprintf("t%d", i/20), fmt.Sprintf("c%d", i%20), true, "judge", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// With an Idempotency-Key a retried attempt gets its first answer, also
// once the contest has ended or the team has solved the challenge, and is
// logged once; the same key for another attempt is a conflict.
func TestAttemptIdempotency(t *testing.T) {
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	s := newService(t, openSQLite(t), clk, pl)
	setup(t, s)
	first, err := s.Attempt(ctx, "ctf", "a", "web", true, "judge", "k-1")
	if err != nil || first.Replayed || first.Attempt.Seq != 1 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	clk.set(t0.Add(3 * time.Hour)) // ended
	again, err := s.Attempt(ctx, "ctf", "a", "web", true, "judge", "k-1")
	if err != nil || !again.Replayed || again.Attempt.ID != first.Attempt.ID || again.Standing == nil || again.Standing.Score != 550 {
		t.Fatalf("retry after the end: %+v, %v", again, err)
	}
	if _, err := s.Attempt(ctx, "ctf", "b", "web", true, "judge", "k-1"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("the key for another team = %v, want conflict", err)
	}
	if _, err := s.Attempt(ctx, "ctf", "a", "web", false, "judge", "k-1"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("the key for another verdict = %v, want conflict", err)
	}
	if _, err := s.Attempt(ctx, "ctf", "a", "web", true, "other-judge", "k-1"); podium.ErrorCode(err) != podium.ECodeUnprocessable {
		t.Fatalf("another key's request after the end = %v, want unprocessable (not a replay)", err)
	}
	clk.set(t0.Add(time.Hour))
	if _, err := s.Attempt(ctx, "ctf", "a", "web", true, "judge", ""); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("a second solve without a key = %v, want conflict", err)
	}
	w1, _ := s.Attempt(ctx, "ctf", "a", "pwn", false, "judge", "k-2")
	w2, err := s.Attempt(ctx, "ctf", "a", "pwn", false, "judge", "k-2")
	if err != nil || !w2.Replayed || w2.Attempt.ID != w1.Attempt.ID {
		t.Fatalf("retried wrong attempt: %+v, %v", w2, err)
	}
	// A refusal retried with its key is the same refusal, logged once.
	for range 2 {
		if _, err := s.Attempt(ctx, "ctf", "a", "web", true, "judge", "k-3"); podium.ErrorCode(err) != podium.ECodeConflict {
			t.Fatalf("a retried second solve = %v, want conflict", err)
		}
	}
	if _, err := s.Attempt(ctx, "ctf", "a", "web", false, "judge", "k-3"); podium.ErrorCode(err) != podium.ECodeConflict ||
		!strings.Contains(err.Error(), "Idempotency-Key") {
		t.Fatalf("the refusal's key for another verdict = %v, want conflict", err)
	}
	log, _ := s.Attempts(ctx, "ctf", 0, 100)
	var got []string
	for _, a := range log {
		got = append(got, fmt.Sprintf("%s/%s/%s/%s", a.Team, a.Challenge, a.Result, a.Idem))
	}
	// The solve, the other key's late attempt, the second solve without
	// a key, the wrong attempt once, the retried refusal once.
	if fmt.Sprint(got) != "[a/web/solved/k-1 a/web/closed/k-1 a/web/duplicate/ a/pwn/wrong/k-2 a/web/duplicate/k-3]" {
		t.Fatalf("attempts logged %v", got)
	}
}

// A team hidden (or renamed) after it solved moves the contest's
// listeners (its live streams) within a round of watchPlayers.
func TestWatchPlayers(t *testing.T) {
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	s := newService(t, openSQLite(t), clk, pl)
	setup(t, s)
	if _, err := s.Attempt(ctx, "ctf", "a", "web", true, "judge", ""); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []string
	s.OnChange(func(id string) { mu.Lock(); calls = append(calls, id); mu.Unlock() })
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(calls) }
	s.watchPlayers() // learns the teams as they are
	n := count()
	s.watchPlayers()
	if count() != n {
		t.Fatal("nothing changed, yet the listeners were called")
	}
	pl.hide("a")
	s.watchPlayers()
	if count() != n+1 {
		t.Fatalf("hiding a team called the listeners %d times, want once", count()-n)
	}
}
