package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMigrateLeagues: podium migrate copies a league's settled and current
// periods, placements, results and tiers with its board, and a node on the
// target answers the league's status, cohorts and histories as the
// embedded server did; podium check finds the copied placements sound.
func TestMigrateLeagues(t *testing.T) {
	dsn, _ := targetDSN(t)
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := &source{dir: filepath.Join(t.TempDir(), "data"), clock: &testClock{t: day}}
	m := s.startOn(t, s.dir)
	key, err := os.ReadFile(filepath.Join(s.dir, keyName))
	if err != nil {
		t.Fatal(err)
	}
	admin, base := strings.TrimSpace(string(key)), m.URL()
	mustDo(t, 201, base, "PUT", "/v1/boards/lg", admin, `{"keys":[{"name":"xp","order":"desc"}],"mode":"sum","public":true,
		"reset":{"every":"day","tz":"UTC"},"league":{"cohort_size":2,"tiers":[{"name":"low","promote":1},{"name":"high","relegate":1}]}}`)
	for i, p := range []string{"a", "b", "c"} {
		mustDo(t, 200, base, "POST", "/v1/boards/lg/scores", admin, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, p, 10*(i+1)))
	}
	s.clock.Set(day.Add(24 * time.Hour))
	mustDo(t, 200, base, "POST", "/v1/leagues/lg/settle", admin, "")
	mustDo(t, 200, base, "POST", "/v1/boards/lg/scores", admin, `{"player":"b","keys":[5]}`)
	reads := []string{"/v1/leagues/lg", "/v1/leagues/lg/players/b/history", "/v1/leagues/lg/players/c",
		"/v1/leagues/lg/tiers/low/cohorts/0?period=previous", "/v1/leagues/lg/players/b/cohort"}
	var want []string
	for _, r := range reads {
		want = append(want, string(mustDo(t, 200, base, "GET", r, "", "")))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn)
	if code != 0 || !strings.Contains(out, "2 league periods, 4 placements, 3 results and 2 tiers copied") {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	node := &Main{Config: Config{Addr: "127.0.0.1:0", DB: dsn, AdminKey: admin, Shutdown: time.Second}, Now: s.clock.Now, Stderr: os.Stderr}
	if err := node.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, r := range reads {
		if got := string(mustDo(t, 200, node.URL(), "GET", r, "", "")); got != want[i] {
			t.Errorf("GET %s on the target:\n%s\nwant\n%s", r, got, want[i])
		}
	}
	node.Close()
	if code, out, _ := runCLI(t, "check", "--db", dsn); code != 0 || !strings.Contains(out, "league placements") {
		t.Fatalf("check on the target: exit %d\n%s", code, out)
	}
}
