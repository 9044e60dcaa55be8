package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCLIUsage(t *testing.T) {
	if code, out, _ := runCLI(t, "version"); code != 0 || !strings.HasPrefix(out, "podium ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "--help"); code != 0 || !strings.Contains(out, "serve") || !strings.Contains(out, "rebuild") {
		t.Fatalf("help: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Fatalf("unknown command: %d %q", code, errs)
	}
	if code, _, _ := runCLI(t); code != 2 {
		t.Fatalf("no command: %d", code)
	}
	for _, cmd := range []string{"serve", "check", "rebuild", "backup", "restore"} {
		code, out, _ := runCLI(t, cmd, "--help")
		if code != 0 || !strings.Contains(out, "--data (PODIUM_DATA)") {
			t.Fatalf("%s --help: %d %q", cmd, code, out)
		}
	}
	if code, _, errs := runCLI(t, "serve", "--sync", "sometimes", "--data", t.TempDir()); code != 2 || !strings.Contains(errs, "--sync") {
		t.Fatalf("bad --sync: %d %q", code, errs)
	}
	if code, _, _ := runCLI(t, "serve", "--no-such-flag"); code == 0 {
		t.Fatal("an unknown flag was accepted")
	}
}

func TestEnvironmentSetsFlags(t *testing.T) {
	t.Setenv("PODIUM_ADDR", "127.0.0.1:9999")
	t.Setenv("PODIUM_STREAM_PER_IP", "7")
	var c Config
	fs := newFlagSet("serve", "", io.Discard)
	c.flags(fs)
	if err := parse(fs, []string{"--stream-per-ip", "9"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" || c.StreamsPerIP != 9 {
		t.Fatalf("env/flag precedence: addr %q per-ip %d", c.Addr, c.StreamsPerIP)
	}
	t.Setenv("PODIUM_MAX_BODY", "lots")
	fs = newFlagSet("serve", "", io.Discard)
	c.flags(fs)
	if err := parse(fs, nil); err == nil || !strings.Contains(err.Error(), "PODIUM_MAX_BODY") {
		t.Fatalf("bad env value: %v", err)
	}
}

// testMain starts a server on port 0 with a temp data dir.
func testMain(t *testing.T, dir string) *Main {
	t.Helper()
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", MaxBody: 1 << 20, AdminKey: "admin-secret",
		Shutdown: time.Second}, Stderr: io.Discard}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func call(t *testing.T, m *Main, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, m.URL()+path, rd)
	req.Header.Set("Authorization", "Bearer admin-secret")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m2 map[string]any
	json.NewDecoder(resp.Body).Decode(&m2)
	return resp.StatusCode, m2
}

// TestRestartCheckRebuild: data survives a restart; check passes on a
// healthy database, finds a corrupted entry (exit 1) and passes again
// after rebuild.
func TestRestartCheckRebuild(t *testing.T) {
	dir := t.TempDir()
	m := testMain(t, dir)
	if code, _ := call(t, m, "PUT", "/v1/boards/b", `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`); code != 201 {
		t.Fatalf("create board: %d", code)
	}
	for _, p := range []string{"a", "b", "a", "c", "a"} {
		if code, _ := call(t, m, "POST", "/v1/boards/b/scores", `{"player":"`+p+`","score":2}`); code != 200 {
			t.Fatalf("submit: %d", code)
		}
	}
	if code, body := call(t, m, "POST", "/v1/admin/check", ""); code != 200 || body["ok"] != true {
		t.Fatalf("online check: %d %v", code, body)
	}
	url := m.URL()
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	if code, out, errs := runCLI(t, "check", "--data", dir, "--url", url); code != 0 || !strings.Contains(out, "check: ok") {
		t.Fatalf("check while serving: %d %s %s", code, out, errs)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = testMain(t, dir)
	code, top := call(t, m, "GET", "/v1/boards/b/entries", "")
	if code != 200 || top["total"].(float64) != 3 {
		t.Fatalf("after restart: %d %v", code, top)
	}
	if first := top["entries"].([]any)[0].(map[string]any); first["player"] != "a" || first["keys"].([]any)[0].(float64) != 6 {
		t.Fatalf("after restart the leader is %v", first)
	}
	m.Close()

	db, err := sql.Open("sqlite", filepath.Join(dir, "podium.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE entries SET rec = (SELECT rec FROM entries WHERE player = 'c') WHERE player = 'a'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ := runCLI(t, "check", "--data", dir)
	if code != 1 || !strings.Contains(out, "player a") {
		t.Fatalf("check of a corrupted entry: %d %s", code, out)
	}
	if code, out, errs := runCLI(t, "rebuild", "--data", dir); code != 0 || !strings.Contains(out, "3 entries") {
		t.Fatalf("rebuild: %d %s %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 0 {
		t.Fatalf("check after rebuild: %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "check", "--data", t.TempDir()); code != 1 || !strings.Contains(errs, "no database") {
		t.Fatalf("check of an empty dir: %d %s", code, errs)
	}
}

// TestGeneratedAdminKey: without PODIUM_ADMIN_KEY the key is generated,
// printed once, stored, and reused on the next start without printing.
func TestGeneratedAdminKey(t *testing.T) {
	dir := t.TempDir()
	var first bytes.Buffer
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", Shutdown: time.Second}, Stderr: &first}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !strings.Contains(first.String(), "pdm_") {
		t.Fatalf("the generated key was not printed: %s", first.String())
	}
	var second bytes.Buffer
	m = &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", Shutdown: time.Second}, Stderr: &second}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if strings.Contains(second.String(), "pdm_") {
		t.Fatalf("the key was printed again: %s", second.String())
	}
	key, err := adminKeyFor(dir)
	if err != nil || !strings.HasPrefix(key, "pdm_") {
		t.Fatalf("stored key: %q %v", key, err)
	}
	req, _ := http.NewRequest("GET", m.URL()+"/v1/keys", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stored key does not work: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}
