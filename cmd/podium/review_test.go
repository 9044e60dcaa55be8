package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMigrateReview: podium migrate copies the review queue with its
// decisions and the freezes; a node on the target lists the same queue,
// holds the frozen player, and can still decide what was pending; a
// --resume copies no item twice.
func TestMigrateReview(t *testing.T) {
	dsn, _ := targetDSN(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := &source{dir: filepath.Join(t.TempDir(), "data"), clock: &testClock{t: now}}
	m := s.startOn(t, s.dir)
	key, err := os.ReadFile(filepath.Join(s.dir, keyName))
	if err != nil {
		t.Fatal(err)
	}
	admin, base := strings.TrimSpace(string(key)), m.URL()
	mustDo(t, 201, base, "PUT", "/v1/boards/b", admin, `{"keys":[{"name":"p","order":"desc"}],"public":true,"review":{"hold":"all"}}`)
	var ids []string
	for _, p := range []string{"a", "b", "c"} {
		s.clock.Set(s.clock.Now().Add(time.Second))
		var held map[string]any
		if err := json.Unmarshal(mustDo(t, 202, base, "POST", "/v1/boards/b/scores", admin, `{"player":"`+p+`","score":5}`), &held); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, held["id"].(string))
	}
	mustDo(t, 200, base, "POST", "/v1/review/"+ids[0]+"/approve", admin, `{"reason":"ok"}`)
	mustDo(t, 200, base, "POST", "/v1/review/"+ids[1]+"/reject", admin, `{"reason":"no"}`)
	mustDo(t, 200, base, "POST", "/v1/players/mallory/freeze", admin, `{"reason":"x"}`)
	want := string(mustDo(t, 200, base, "GET", "/v1/review?status=all", admin, ""))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn)
	if code != 0 || !strings.Contains(out, "migrate: 3 review items and 1 freezes copied") {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn, "--resume"); code != 0 || !strings.Contains(out, "migrate: 0 review items and 1 freezes copied") {
		t.Fatalf("migrate again: exit %d\n%s\n%s", code, out, errs)
	}
	node := &Main{Config: Config{Addr: "127.0.0.1:0", DB: dsn, AdminKey: admin, Shutdown: time.Second}, Now: s.clock.Now, Stderr: os.Stderr}
	if err := node.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if got := string(mustDo(t, 200, node.URL(), "GET", "/v1/review?status=all", admin, "")); got != want {
		t.Fatalf("queue on the target:\n%s\nwant\n%s", got, want)
	}
	mustDo(t, 200, node.URL(), "PUT", "/v1/boards/b", admin, `{"review":{"hold":"none"}}`)
	if b := string(mustDo(t, 202, node.URL(), "POST", "/v1/boards/b/scores", admin, `{"player":"mallory","score":1}`)); !strings.Contains(b, `"reason":"frozen"`) {
		t.Fatalf("frozen player on the target: %s", b)
	}
	mustDo(t, 200, node.URL(), "POST", "/v1/review/"+ids[2]+"/approve", admin, "")
	mustDo(t, 409, node.URL(), "POST", "/v1/review/"+ids[0]+"/approve", admin, "")
}
