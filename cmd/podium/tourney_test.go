package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMigrateTournaments: podium migrate copies a settled tournament's
// joins, payouts and settlement with its boards, verifies them, and a node
// on the target answers its status as the embedded server did; a damaged
// payout on the target fails the verification.
func TestMigrateTournaments(t *testing.T) {
	dsn, _ := targetDSN(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := &source{dir: filepath.Join(t.TempDir(), "data"), clock: &testClock{t: now.Add(-2 * time.Hour)}}
	m := s.startOn(t, s.dir)
	key, err := os.ReadFile(filepath.Join(s.dir, keyName))
	if err != nil {
		t.Fatal(err)
	}
	admin, base := strings.TrimSpace(string(key)), m.URL()
	mustDo(t, 201, base, "PUT", "/v1/boards/pts:total", admin, `{"keys":[{"name":"p","order":"desc"}],"mode":"sum","public":true,"points":{"ladder":"pts","kind":"total"}}`)
	mustDo(t, 201, base, "PUT", "/v1/boards/cup", admin, fmt.Sprintf(`{"keys":[{"name":"t","order":"asc"}],"public":true,
		"tournament":{"start":%q,"end":%q,"join_required":true,"ladder":"pts"}}`,
		now.Add(-3*time.Hour).Format(time.RFC3339Nano), now.Add(-time.Hour).Format(time.RFC3339Nano)))
	for i, p := range []string{"a", "b", "c"} {
		mustDo(t, 201, base, "POST", "/v1/tournaments/cup/join", admin, fmt.Sprintf(`{"player":%q}`, p))
		mustDo(t, 200, base, "POST", "/v1/boards/cup/scores", admin, fmt.Sprintf(`{"player":%q,"score":%d}`, p, 10*(i+1)))
	}
	s.clock.Set(now)
	mustDo(t, 200, base, "POST", "/v1/tournaments/cup/settle", admin, "")
	want := string(mustDo(t, 200, base, "GET", "/v1/tournaments/cup", "", ""))
	wantPay := string(mustDo(t, 200, base, "GET", "/v1/tournaments/cup/payouts", "", ""))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn)
	if code != 0 || !strings.Contains(out, "3 tournament joins, 3 payouts and 1 settlements copied") ||
		!strings.Contains(out, "migrate: verified: the target equals the data directory") {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	node := &Main{Config: Config{Addr: "127.0.0.1:0", DB: dsn, AdminKey: admin, Shutdown: time.Second}, Now: s.clock.Now, Stderr: os.Stderr}
	if err := node.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := string(mustDo(t, 200, node.URL(), "GET", "/v1/tournaments/cup", "", ""))
	gotPay := string(mustDo(t, 200, node.URL(), "GET", "/v1/tournaments/cup/payouts", "", ""))
	node.Close()
	if got != want || gotPay != wantPay {
		t.Fatalf("on the target:\n%s\n%s\nwant\n%s\n%s", got, gotPay, want, wantPay)
	}

	sqlExec(t, dsn, "UPDATE tournament_payouts SET points = 7 WHERE player = 'b'")
	code, out, _ = runCLI(t, "migrate", "--from", s.dir, "--db", dsn, "--verify-only")
	if code == 0 || !strings.Contains(out, "payout cup b") {
		t.Fatalf("verify after a payout was damaged: exit %d\n%s", code, out)
	}
}

// TestCheckRebuildTournaments: podium check reports a settlement whose
// payouts no longer match the final ranks and a damaged payout; podium
// rebuild settles the first again and leaves the second to an operator.
func TestCheckRebuildTournaments(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := &source{dir: filepath.Join(t.TempDir(), "data"), clock: &testClock{t: now.Add(-2 * time.Hour)}}
	m := s.startOn(t, s.dir)
	key, err := os.ReadFile(filepath.Join(s.dir, keyName))
	if err != nil {
		t.Fatal(err)
	}
	admin, base := strings.TrimSpace(string(key)), m.URL()
	mustDo(t, 201, base, "PUT", "/v1/boards/pts:total", admin, `{"keys":[{"name":"p","order":"desc"}],"mode":"sum","points":{"ladder":"pts","kind":"total"}}`)
	for _, id := range []string{"cup1", "cup2"} {
		mustDo(t, 201, base, "PUT", "/v1/boards/"+id, admin, fmt.Sprintf(`{"keys":[{"name":"t","order":"asc"}],
			"tournament":{"start":%q,"end":%q,"weight":100,"ladder":"pts"}}`,
			now.Add(-3*time.Hour).Format(time.RFC3339Nano), now.Add(-time.Hour).Format(time.RFC3339Nano)))
		for i, p := range []string{"a", "b"} {
			mustDo(t, 200, base, "POST", "/v1/boards/"+id+"/scores", admin, fmt.Sprintf(`{"player":%q,"score":%d}`, id+p, i+1))
		}
	}
	s.clock.Set(now)
	mustDo(t, 200, base, "POST", "/v1/tournaments/cup1/settle", admin, "")
	mustDo(t, 200, base, "POST", "/v1/tournaments/cup2/settle", admin, "")
	// The ranks of cup1 move after its settlement.
	mustDo(t, 204, base, "DELETE", "/v1/boards/cup1/entries/cup1a", admin, "")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "check", "--data", s.dir)
	t.Logf("check:\n%s", out)
	if code == 0 || !strings.Contains(out, "board cup1 period payouts player cup1a") {
		t.Fatalf("check after ranks moved: exit %d\n%s", code, out)
	}
	// Damage a payout of cup2 behind podium's back.
	db, err := sql.Open("sqlite", filepath.Join(s.dir, dbName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE tournament_payouts SET points = 7 WHERE player = 'cup2a'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ = runCLI(t, "rebuild", "--data", s.dir)
	if code != 0 || !strings.Contains(out, "settled again, paying the differences: cup1\n") {
		t.Fatalf("rebuild: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", "--data", s.dir)
	if code == 0 || strings.Contains(out, "board cup1 ") || !strings.Contains(out, "board cup2 period payouts player cup2a: want rank 1, 100 points, got rank 1, 7 points") {
		t.Fatalf("check after rebuild: exit %d\n%s", code, out)
	}
	// The same through a running server.
	m = s.startOn(t, s.dir)
	code, out, _ = runCLI(t, "check", "--url", m.URL(), "--data", s.dir)
	if code == 0 || !strings.Contains(out, "tournament payouts and points boards: 2 difference(s)") {
		t.Fatalf("check --url: exit %d\n%s", code, out)
	}
}
