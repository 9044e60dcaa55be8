package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// openMain starts a server on port 0 in dir with its log in logw, and
// returns the error of Open instead of failing the test.
func openMain(t *testing.T, dir string, logw io.Writer) (*Main, error) {
	t.Helper()
	if logw == nil {
		logw = io.Discard
	}
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", AdminKey: "admin-secret",
		Shutdown: time.Second}, Stderr: logw}
	if err := m.Open(context.Background()); err != nil {
		return nil, err
	}
	t.Cleanup(func() { m.Close() })
	return m, nil
}

// callURL sends an admin request to the server at base.
func callURL(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Authorization", "Bearer admin-secret")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// fillBoard creates board b and gives players p0..p(n-1) one score each,
// in batches.
func fillBoard(t *testing.T, base, b string, n int) {
	t.Helper()
	if code, _ := callURL(t, base, "PUT", "/v1/boards/"+b, `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`); code != 201 {
		t.Fatalf("create board %s: %d", b, code)
	}
	for i := 0; i < n; {
		var items []string
		for ; i < n && len(items) < 1000; i++ {
			items = append(items, fmt.Sprintf(`{"board":%q,"player":"p%d","keys":[%d]}`, b, i, i))
		}
		if code, _ := callURL(t, base, "POST", "/v1/scores", `{"scores":[`+strings.Join(items, ",")+`]}`); code != 200 {
			t.Fatalf("submit: %d", code)
		}
	}
}

func total(t *testing.T, base, b string) float64 {
	t.Helper()
	code, body := callURL(t, base, "GET", "/v1/boards/"+b+"/entries?limit=1", "")
	if code != 200 {
		t.Fatalf("read %s: %d %v", b, code, body)
	}
	return body["total"].(float64)
}

// Item 21: every mistake on the command line is one clear line that names
// the flag as --name and what it expects, then a hint to --help (not the
// whole usage), and exit code 2.
func TestCommandLineMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `podium: unknown command "frobnicate"`},
		{[]string{"serve", "--stream-coalesce", "abc"}, `podium serve: --stream-coalesce: "abc" is not a duration (e.g. 200ms, 1s)`},
		{[]string{"serve", "--max-body", "lots"}, `podium serve: --max-body: "lots" is not a whole number (e.g. 1048576)`},
		{[]string{"serve", "--demo=maybe"}, `podium serve: --demo: "maybe" is not true or false`},
		{[]string{"serve", "--no-such-flag"}, `podium serve: unknown flag --no-such-flag`},
		{[]string{"serve", "--addr"}, `podium serve: --addr needs a value`},
		{[]string{"serve", "extra"}, `podium serve: unexpected argument "extra"`},
		{[]string{"serve", "--sync", "sometimes"}, `podium serve: --sync: "sometimes" is not full or normal`},
		{[]string{"serve", "--log-level", "loud"}, `podium serve: --log-level: "loud" is not debug, info, warn or error`},
		{[]string{"serve", "--addr", "nonsense"}, `podium serve: --addr: "nonsense" is not host:port`},
		{[]string{"check", "--url"}, `podium check: --url needs a value`},
		{[]string{"check", "--url", "nonsense"}, `podium check: --url: "nonsense" is not an http:// or https:// URL`},
		{[]string{"rebuild", "--url", "localhost:8080"}, `podium rebuild: --url: "localhost:8080" is not an http:// or https:// URL`},
		{[]string{"backup", "--data", "x"}, `podium backup: --to is required`},
		{[]string{"restore"}, `podium restore: --from is required`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir) // a mistake must not create ./podium-data either
			code, out, errs := runCLI(t, tc.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q does not say %q", errs, tc.want)
			}
			hint := "Run 'podium " + tc.args[0] + " --help' for usage."
			if tc.args[0] == "frobnicate" {
				hint = "Run 'podium --help' for usage."
			}
			if !strings.Contains(errs, hint) || strings.Contains(errs, "Flags (each") || strings.Contains(errs, "Commands:") {
				t.Errorf("stderr %q: want the hint %q and not the whole usage", errs, hint)
			}
			if strings.Contains(errs, "for flag -") || strings.Contains(errs, "defined: -") || strings.Contains(errs, "parse error") {
				t.Errorf("stderr %q is the flag package's message (a single-dash name, no expected format)", errs)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a command-line mistake created %v", entries[0].Name())
			}
		})
	}
	t.Setenv("PODIUM_STREAM_MAX", "many")
	if code, _, errs := runCLI(t, "serve"); code != 2 || !strings.Contains(errs, `PODIUM_STREAM_MAX: "many" is not a whole number`) {
		t.Errorf("bad environment value: %d %q", code, errs)
	}
}

// Item 20: a start that fails on a port in use or a bad address leaves no
// data directory and prints no admin key.
func TestFailedStartLeavesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("PODIUM_ADMIN_KEY", "")
	data := filepath.Join(t.TempDir(), "data")
	code, out, errs := runCLI(t, "serve", "--addr", ln.Addr().String(), "--data", data)
	if code != 1 || !strings.Contains(errs, "address already in use") {
		t.Errorf("port in use: exit %d, %q", code, errs)
	}
	if strings.Contains(out+errs, "admin key") || strings.Contains(out+errs, "pdm_") {
		t.Errorf("a failed start printed an admin key: %q", errs)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a failed start created the data directory (%v)", err)
	}
	if code, _, _ := runCLI(t, "serve", "--addr", "nonsense", "--data", data); code != 2 {
		t.Errorf("--addr nonsense: exit %d, want 2", code)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("--addr nonsense created the data directory (%v)", err)
	}
	// The debug address is bound before the data directory too: a server
	// that starts without the profiles it was asked for, and says so only
	// in a log line, is a failed start that left a directory and a key.
	var logb bytes.Buffer
	m := &Main{Config: Config{Addr: "127.0.0.1:0", DebugAddr: ln.Addr().String(), Data: data, Sync: "normal", Shutdown: time.Second}, Stderr: &logb}
	err = m.Open(context.Background())
	if err == nil {
		m.Close()
		t.Errorf("a server started without its --debug-addr %s, which is in use", ln.Addr())
	} else if !strings.Contains(err.Error(), "--debug-addr") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("debug port in use: %v", err)
	}
	if strings.Contains(logb.String(), "pdm_") {
		t.Errorf("a failed start printed an admin key: %q", logb.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a debug port in use created the data directory (%v)", err)
	}
}

// A negative --stream-memory is a mistake like any other negative size,
// not a silent "use the default".
func TestNegativeStreamMemoryRefused(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: data, Sync: "normal", StreamMemory: -1, Shutdown: time.Second}, Stderr: io.Discard}
	err := m.Open(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("a server started with --stream-memory -1")
	}
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--stream-memory must not be negative") {
		t.Errorf("--stream-memory -1: %v, want a usage error naming the flag", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a refused start created the data directory (%v)", err)
	}
}

// Item 19: one data directory, one process. While a server runs, a second
// server and the offline check and rebuild fail at once, naming its pid and
// saying what to do instead; backup and check --url work.
func TestOneProcessPerDataDirectory(t *testing.T) {
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fillBoard(t, m.URL(), "b", 10)
	pid := fmt.Sprintf("pid %d", os.Getpid())
	if _, err := openMain(t, dir, nil); err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), pid) {
		t.Errorf("second server on the same directory: %v", err)
	}
	for _, tc := range []struct{ cmd, hint string }{{"rebuild", "podium rebuild --url"}, {"check", "podium check --url"}} {
		code, _, errs := runCLI(t, tc.cmd, "--data", dir)
		if code != 1 || !strings.Contains(errs, pid) || !strings.Contains(errs, tc.hint) {
			t.Errorf("offline %s while a server runs: exit %d, %q", tc.cmd, code, errs)
		}
	}
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	if code, out, errs := runCLI(t, "check", "--url", m.URL(), "--data", dir); code != 0 || !strings.Contains(out, "check: ok") {
		t.Errorf("check --url: %d %s %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "backup", "--data", dir, "--to", filepath.Join(t.TempDir(), "b.db")); code != 0 {
		t.Errorf("backup while the server runs: %d %s", code, errs)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "rebuild", "--data", dir); code != 0 || !strings.Contains(out, "10 entries") {
		t.Errorf("rebuild after the server stopped: %d %s %s", code, out, errs)
	}
}

// Items 19 and 3 across processes: a server killed with kill -9 leaves no
// stale lock, and the next start runs quick_check (the database was not
// closed) and serves every acknowledged score.
func TestKilledServer(t *testing.T) {
	dir := t.TempDir()
	cmd, url := startProcess(t, []string{"PODIUM_ADMIN_KEY=admin-secret"},
		"serve", "--addr", "127.0.0.1:0", "--data", dir, "--sync", "normal")
	fillBoard(t, url, "b", 2500)
	pid := fmt.Sprintf("pid %d", cmd.Process.Pid)
	if _, err := openMain(t, dir, nil); err == nil || !strings.Contains(err.Error(), pid) {
		t.Errorf("second server beside another process: %v", err)
	}
	if code, _, errs := runCLI(t, "rebuild", "--data", dir); code != 1 || !strings.Contains(errs, pid) {
		t.Errorf("offline rebuild beside another process: %d %q", code, errs)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	var log bytes.Buffer
	m, err := openMain(t, dir, &log)
	if err != nil {
		t.Fatalf("start after kill -9: %v", err)
	}
	if !strings.Contains(log.String(), "did not shut down cleanly") || !strings.Contains(log.String(), "quick_check passed") {
		t.Errorf("no quick_check after kill -9; log:\n%s", log.String())
	}
	if n := total(t, m.URL(), "b"); n != 2500 {
		t.Errorf("after kill -9 the board has %v entries, want 2500", n)
	}
	m.Close()
	log.Reset()
	if _, err := openMain(t, dir, &log); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "quick_check") {
		t.Errorf("quick_check ran after a clean shutdown:\n%s", log.String())
	}
}

// Item 3: a database that was emptied, deleted or replaced by another
// instance's is refused (by serve and by check), not served as new.
func TestRefusesLostOrReplacedDatabase(t *testing.T) {
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fillBoard(t, m.URL(), "b", 3)
	m.Close()
	db := filepath.Join(dir, dbName)
	saved, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := os.ReadFile(filepath.Join(dir, instanceName))
	if len(bytes.TrimSpace(id)) != 32 {
		t.Fatalf("instance.id holds %q", id)
	}

	other := t.TempDir()
	m2, err := openMain(t, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2.Close()
	foreign, _ := os.ReadFile(filepath.Join(other, dbName))

	for _, tc := range []struct {
		name   string
		break_ func()
		say    string
	}{
		{"truncated", func() { os.Truncate(db, 0) }, "is empty"},
		{"deleted", func() { os.Remove(db) }, "is missing"},
		{"another instance's", func() { os.WriteFile(db, foreign, 0o600) }, "belongs to podium instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.break_()
			before, _ := os.ReadFile(db)
			if _, err := openMain(t, dir, nil); err == nil || !strings.Contains(err.Error(), tc.say) {
				t.Errorf("start: %v, want a refusal that says %q", err, tc.say)
			}
			code, out, _ := runCLI(t, "check", "--data", dir)
			if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, tc.say) {
				t.Errorf("check: %d %q", code, out)
			}
			if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
				t.Errorf("the refused database file was changed")
			}
			os.WriteFile(db, saved, 0o600)
			if m, err := openMain(t, dir, nil); err != nil {
				t.Errorf("start with the right database back: %v", err)
			} else {
				m.Close()
			}
		})
	}

	// A database copied into a new directory is adopted there.
	moved := t.TempDir()
	os.WriteFile(filepath.Join(moved, dbName), saved, 0o600)
	m3, err := openMain(t, moved, nil)
	if err != nil {
		t.Fatalf("database in a new directory: %v", err)
	}
	if n := total(t, m3.URL(), "b"); n != 3 {
		t.Errorf("moved database has %v entries", n)
	}
	m3.Close()
	if got, _ := os.ReadFile(filepath.Join(moved, instanceName)); !bytes.Equal(got, id) {
		t.Errorf("the new directory took id %q, want %q", got, id)
	}
}

// Item 3: after an unclean shutdown, quick_check runs before the database
// is opened and refuses a damaged one. The page damaged here belongs to the
// start of the submissions log, which a start after a clean shutdown never
// reads: without quick_check the server would start and serve.
func TestQuickCheckAfterUncleanShutdown(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fillBoard(t, m.URL(), "b", 3000)
	m.Close()

	dbPath := filepath.Join(dir, dbName)
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var page, pageSize int64
	if err := db.QueryRow(`SELECT pageno FROM dbstat WHERE name = 'submissions' AND pagetype = 'leaf' ORDER BY path LIMIT 1`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	db.Close()
	garbage := make([]byte, pageSize)
	for i := 0; i < len(garbage); i += 8 {
		binary.LittleEndian.PutUint64(garbage[i:], rng.Uint64())
	}
	garbage[0] = 0 // not a b-tree page type: the damage is structural
	f, err := os.OpenFile(dbPath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(garbage, (page-1)*pageSize)
	f.Close()
	// What a crashed process leaves behind.
	if err := os.WriteFile(filepath.Join(dir, runningName), []byte("1 crashed\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	if _, err := openMain(t, dir, nil); err == nil || !strings.Contains(err.Error(), "quick_check") {
		t.Fatalf("start on a damaged database after an unclean shutdown: %v", err)
	}
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 1 || !strings.Contains(out, "quick_check") {
		t.Errorf("check of the damaged database: %d %q", code, out)
	}
}

// Item 12: the data directory is 0700 and every file podium creates in it
// 0600; an admin key file that others can read gets a warning.
func TestDataDirectoryIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", Shutdown: time.Second}, Stderr: io.Discard}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The server runs, so the database has its -wal and -shm files now.
	check := func(name string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	check(".", 0o700)
	for _, name := range []string{dbName, dbName + "-wal", dbName + "-shm", keyName, instanceName, lockName, runningName} {
		check(name, 0o600)
	}
	m.Close()

	os.Chmod(filepath.Join(dir, keyName), 0o644)
	var log bytes.Buffer
	m = &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", Shutdown: time.Second}, Stderr: &log}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !strings.Contains(log.String(), "admin key file is readable by other users") {
		t.Errorf("no warning about a readable admin.key:\n%s", log.String())
	}
}

// Item 22: the log says where the admin key comes from, and warns when
// PODIUM_ADMIN_KEY overrides a different stored key; never the secret.
func TestAdminKeySourceIsLogged(t *testing.T) {
	dir := t.TempDir()
	start := func(key string) string {
		t.Helper()
		var log bytes.Buffer
		m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", AdminKey: key, Shutdown: time.Second}, Stderr: &log}
		if err := m.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		m.Close()
		return log.String()
	}
	if log := start(""); !strings.Contains(log, "source=generated") {
		t.Errorf("first start:\n%s", log)
	}
	if log := start(""); !strings.Contains(log, "source=file") {
		t.Errorf("stored key:\n%s", log)
	}
	log := start("from-the-environment")
	if !strings.Contains(log, "source=environment") || !strings.Contains(log, "overrides") || !strings.Contains(log, "level=WARN") {
		t.Errorf("PODIUM_ADMIN_KEY over a stored key:\n%s", log)
	}
	if strings.Contains(log, "from-the-environment") {
		t.Errorf("the log shows the secret:\n%s", log)
	}
}

// Item 22: podium version prints the module version, VCS revision and
// commit time from the build info.
func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/podiumhq/podium", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "29b7f3d1e0c2aaaabbbbccccddddeeeeffff0000"},
			{Key: "vcs.time", Value: "2026-11-30T18:56:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	var out bytes.Buffer
	b := buildFrom(bi, stamp{})
	b.print(&out)
	for _, want := range []string{"podium v1.2.3\n", "29b7f3d1e0c2aaaabbbbccccddddeeeeffff0000 (with uncommitted changes)", "2026-11-30T18:56:00Z", "go1.26.8"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
	if s := b.short(); s != "29b7f3d1e0c2+modified" {
		t.Errorf("short revision %q", s)
	}
	if v := buildFrom(bi, stamp{Version: "v9"}).Version; v != "v9" {
		t.Errorf("-X main.Version did not win: %q", v)
	}
	if b := buildFrom(nil, stamp{}); b.Version != "(devel)" || b.short() != "unknown" {
		t.Errorf("no build info: %+v", b)
	}
	code, stdout, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "podium ") || !strings.Contains(stdout, "revision:") || strings.HasPrefix(stdout, "podium dev") {
		t.Errorf("podium version: %d %q", code, stdout)
	}
}

// Item 24: a backup taken while the server runs restores to exactly what it
// held, into the same directory (the replaced database is kept) or a new
// one; not into another instance's directory nor under a running server.
func TestBackupRestore(t *testing.T) {
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fillBoard(t, m.URL(), "b", 1500)
	bk := filepath.Join(t.TempDir(), "podium-backup.db")
	code, out, errs := runCLI(t, "backup", "--data", dir, "--to", bk)
	id, _ := os.ReadFile(filepath.Join(dir, instanceName))
	if code != 0 || !strings.Contains(out, "instance "+strings.TrimSpace(string(id))) {
		t.Fatalf("backup: %d %s %s", code, out, errs)
	}
	if left, _ := os.ReadDir(filepath.Dir(bk)); len(left) != 1 {
		t.Errorf("the backup directory holds %d files, want only the backup", len(left))
	}
	if code, _, errs := runCLI(t, "backup", "--data", dir, "--to", bk); code != 1 || !strings.Contains(errs, "already exists") {
		t.Errorf("backup over an existing file: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "restore", "--data", dir, "--from", bk); code != 1 || !strings.Contains(errs, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("restore under a running server: %d %s", code, errs)
	}
	callURL(t, m.URL(), "POST", "/v1/boards/b/scores", `{"player":"late","score":1}`) // after the backup
	m.Close()

	if code, out, errs := runCLI(t, "restore", "--data", dir, "--from", bk); code != 0 || !strings.Contains(out, "replaced is kept") {
		t.Fatalf("restore: %d %s %s", code, out, errs)
	}
	m, err = openMain(t, dir, nil)
	if err != nil {
		t.Fatalf("start after restore: %v", err)
	}
	if n := total(t, m.URL(), "b"); n != 1500 {
		t.Errorf("after restore %v entries, want the 1500 of the backup", n)
	}
	m.Close()
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 0 {
		t.Errorf("check after restore: %d %s", code, out)
	}

	fresh := filepath.Join(t.TempDir(), "new")
	if code, _, errs := runCLI(t, "restore", "--data", fresh, "--from", bk); code != 0 {
		t.Fatalf("restore into a new directory: %d %s", code, errs)
	}
	if got, _ := os.ReadFile(filepath.Join(fresh, instanceName)); !bytes.Equal(got, id) {
		t.Errorf("restored directory has instance %q, want %q", got, id)
	}
	if m, err := openMain(t, fresh, nil); err != nil {
		t.Errorf("start in the new directory: %v", err)
	} else {
		m.Close()
	}

	other := t.TempDir()
	m2, err := openMain(t, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2.Close()
	if code, _, errs := runCLI(t, "restore", "--data", other, "--from", bk); code != 1 || !strings.Contains(errs, "belongs to podium instance") {
		t.Errorf("restore into another instance's directory: %d %s", code, errs)
	}

	// A backup from before instance ids takes the directory's id.
	old := filepath.Join(t.TempDir(), "old.db")
	b, _ := os.ReadFile(bk)
	os.WriteFile(old, b, 0o600)
	db, err := sql.Open("sqlite", old)
	if err != nil {
		t.Fatal(err)
	}
	// Without migration 0003 (the instance id): the runner applies every
	// migration a database has not recorded, gaps included.
	if _, err := db.Exec("DROP TABLE instance; DELETE FROM schema_migrations WHERE version = 3"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code, _, errs := runCLI(t, "restore", "--data", dir, "--from", old); code != 0 {
		t.Errorf("restore of a backup without an instance id: %d %s", code, errs)
	}
	if m, err := openMain(t, dir, nil); err != nil {
		t.Errorf("start after restoring a backup without an instance id: %v", err)
	} else {
		m.Close()
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, dbName+".replaced-*")); len(kept) != 2 {
		t.Errorf("two restores kept %v, want both replaced databases", kept)
	}

	// The manual restore that the README describes works too.
	os.Remove(filepath.Join(dir, dbName+"-wal"))
	os.Remove(filepath.Join(dir, dbName+"-shm"))
	os.WriteFile(filepath.Join(dir, dbName), b, 0o600)
	if m, err := openMain(t, dir, nil); err != nil {
		t.Errorf("start after a manual restore: %v", err)
	} else {
		m.Close()
	}
}

// podium check --url runs the store checks on the server, which holds the
// data directory: a damaged entries table shows up as a difference from
// the log.
func TestCheckURLChecksTheStore(t *testing.T) {
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fillBoard(t, m.URL(), "b", 3)
	if code, _ := callURL(t, m.URL(), "POST", "/v1/admin/reload", ""); code != 200 { // writes the entries table
		t.Fatalf("reload: %d", code)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, dbName)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE entries SET rec = (SELECT rec FROM entries WHERE player = 'p2') WHERE player = 'p0'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	code, out, errs := runCLI(t, "check", "--url", m.URL())
	if code != 1 || !strings.Contains(out, "entries vs log: 1 difference") || !strings.Contains(out, "ok    server "+m.URL()+": SQLite quick_check") {
		t.Errorf("check --url of a damaged entries table: %d\n%s%s", code, out, errs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*snapshot*")); len(left) > 0 {
		t.Errorf("the check left %v behind", left)
	}
}

// unknownOutcomeStore is the real store whose group commits, once armed,
// end with an unknown outcome, as when an fsync fails on a dying disk.
type unknownOutcomeStore struct {
	podium.Store
	armed atomic.Bool
}

func (s *unknownOutcomeStore) Commit(ctx context.Context, b *podium.Batch) error {
	if s.armed.Load() && len(b.Submissions) > 0 {
		if err := s.Store.Commit(ctx, b); err != nil {
			return err
		}
		return podium.OutcomeUnknown(errors.New("sync: input/output error (injected)"))
	}
	return s.Store.Commit(ctx, b)
}

// A storage failure that stopped writes is not a clean shutdown: the disk
// said it may not hold what it was given, so the next start runs
// quick_check, as after a crash.
func TestStorageFailureMakesNextStartCheck(t *testing.T) {
	var fault *unknownOutcomeStore
	testHookWrapStore = func(s podium.Store) podium.Store {
		fault = &unknownOutcomeStore{Store: s}
		return fault
	}
	t.Cleanup(func() { testHookWrapStore = nil })
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	testHookWrapStore = nil
	base := m.URL()
	if code, _ := callURL(t, base, "PUT", "/v1/boards/b", `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`); code != 201 {
		t.Fatalf("create board: %d", code)
	}
	fault.armed.Store(true)
	if code, body := callURL(t, base, "POST", "/v1/boards/b/scores", `{"player":"a","score":1}`); code != 503 {
		t.Fatalf("submit on a failing disk: %d %v", code, body)
	}
	if st := m.Engine.Status(); st.StorageFailed == "" {
		t.Fatal("the engine did not stop writes after an unknown outcome")
	}
	m.Close()
	if _, err := os.Stat(filepath.Join(dir, runningName)); err != nil {
		t.Errorf("after a storage failure the shutdown counted as clean (%v): the next start would skip quick_check", err)
	}
	var log bytes.Buffer
	if _, err := openMain(t, dir, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "quick_check passed") {
		t.Errorf("no quick_check at the start after a storage failure; log:\n%s", log.String())
	}
}
