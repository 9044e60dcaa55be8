package main

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func feedRows(t *testing.T, dir string) int {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "podium.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM feed").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// --feed-cap bounds the feed's reads; podium check (online and offline)
// and podium rebuild leave the feed as it is.
func TestFeedCapAndCommands(t *testing.T) {
	dir := t.TempDir()
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", MaxBody: 1 << 20, AdminKey: "admin-secret",
		Shutdown: time.Second, FeedCap: 3}, Stderr: io.Discard}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := call(t, m, "PUT", "/v1/boards/b", `{"keys":[{"name":"ms","order":"asc"}],"mode":"best","public":true}`); code != 201 {
		t.Fatalf("create board: %d", code)
	}
	for _, p := range []string{`{"player":"a","keys":[50]}`, `{"player":"b","keys":[40]}`} {
		if code, _ := call(t, m, "POST", "/v1/boards/b/scores", p); code != 200 {
			t.Fatalf("submit: %d", code)
		}
	}
	if code, body := call(t, m, "GET", "/v1/feed?limit=4", ""); code != 400 {
		t.Fatalf("limit above --feed-cap: %d %v", code, body)
	}
	if code, body := call(t, m, "GET", "/v1/feed?limit=3", ""); code != 200 || len(body["events"].([]any)) != 3 {
		t.Fatalf("limit=3: %d %v", code, body)
	}
	if code, body := call(t, m, "POST", "/v1/admin/check", ""); code != 200 || body["ok"] != true {
		t.Fatalf("online check: %d %v", code, body)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	before := feedRows(t, dir)
	if before != 4 {
		t.Fatalf("%d feed rows, want 4 (two personal bests, two new #1s)", before)
	}
	if code, out, errs := runCLI(t, "check", "--data", dir); code != 0 {
		t.Fatalf("check: %d %s %s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "rebuild", "--data", dir); code != 0 {
		t.Fatalf("rebuild: %d %s %s", code, out, errs)
	}
	if n := feedRows(t, dir); n != before {
		t.Fatalf("check and rebuild changed the feed: %d rows, were %d", n, before)
	}

	m = &Main{Config: Config{Addr: "127.0.0.1:0", Data: t.TempDir(), Sync: "normal", FeedCap: maxFeedCap + 1, Shutdown: time.Second}, Stderr: io.Discard}
	err := m.Open(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("a server started with a --feed-cap above the maximum")
	}
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--feed-cap") {
		t.Errorf("--feed-cap too large: %v, want a usage error naming the flag", err)
	}
}
