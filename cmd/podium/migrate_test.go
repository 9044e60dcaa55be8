package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
)

// testClock is a clock that tests move by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// source is an embedded deployment built for the migration tests.
type source struct {
	dir      string
	clock    *testClock
	adminKey string // generated, in dir/admin.key
	gameKey  string // the secret of an API key limited to boards m:*
	boards   []string
	players  []string         // registered players
	replays  []idempotentCall // recent requests sent with an Idempotency-Key
	tail     int              // submissions logged behind the entries table
	recent   int              // idempotency records of the last 48 hours
}

// idempotentCall is a request sent with an Idempotency-Key and its answer.
type idempotentCall struct {
	path, key, body string
	status          int
	answer          []byte
}

// startOn starts a server on dir (SQLite) with the source's clock.
func (s *source) startOn(t *testing.T, dir string) *Main {
	t.Helper()
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", Shutdown: time.Second}, Now: s.clock.Now, Stderr: io.Discard}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func mustDo(t *testing.T, want int, base, method, path, key, body string, hdr ...string) []byte {
	t.Helper()
	code, b, _ := do(base, method, path, key, body, hdr...)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return b
}

// buildSource makes a data directory with boards of every mode and reset
// cadence, several periods, registered and hidden players, meta on boards,
// players and entries, API keys (one revoked), deleted entries,
// idempotency records (one older than 48 hours) and, at the end, log rows
// that the entries table does not reflect yet (as after a crash). A few
// thousand submissions in all.
func buildSource(t *testing.T) *source {
	t.Helper()
	seed := clusterSeed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := &source{dir: filepath.Join(t.TempDir(), "data"), clock: &testClock{t: now.Add(-72 * time.Hour)}}
	m := s.startOn(t, s.dir)
	key, err := os.ReadFile(filepath.Join(s.dir, keyName))
	if err != nil {
		t.Fatal(err)
	}
	s.adminKey = strings.TrimSpace(string(key))
	base, admin := m.URL(), s.adminKey
	for _, b := range []struct{ id, body string }{
		{"m:best", `{"title":"Best","keys":[{"name":"t","order":"asc"},{"name":"b","order":"desc"}],"mode":"best","reset":{"every":"day","tz":"Asia/Shanghai"},"public":true,"meta":{"game":"ms"}}`},
		{"m:latest", `{"keys":[{"name":"n","order":"desc"}],"mode":"latest","reset":{"every":"week","tz":"America/New_York"}}`},
		{"m:month", `{"keys":[{"name":"a","order":"desc"},{"name":"b","order":"asc"},{"name":"c","order":"desc"}],"mode":"best","reset":{"every":"month"},"public":true}`},
		{"m:sum", `{"title":"Sum","keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`},
		{"m:empty", `{"keys":[{"name":"n","order":"desc"},{"name":"m","order":"desc"},{"name":"o","order":"desc"},{"name":"p","order":"desc"}],"mode":"sum"}`},
	} {
		mustDo(t, 201, base, "PUT", "/v1/boards/"+b.id, admin, b.body)
		s.boards = append(s.boards, b.id)
	}
	// An answer older than 48 hours: not copied.
	mustDo(t, 200, base, "POST", "/v1/boards/m:sum/scores", admin, `{"player":"p1","score":1}`, "Idempotency-Key", "old-1")

	keysFor := map[string]int{"m:best": 2, "m:latest": 1, "m:month": 3, "m:sum": 1}
	batch := func(n int) {
		var items []string
		for range n {
			b := s.boards[rng.IntN(4)]
			if b == "m:empty" {
				continue
			}
			keys := make([]string, keysFor[b])
			for k := range keys {
				keys[k] = fmt.Sprint(rng.Int64N(2000) - 1000)
			}
			meta := ""
			if rng.IntN(4) == 0 {
				meta = fmt.Sprintf(`,"meta":{"r":%d}`, rng.IntN(100))
			}
			items = append(items, fmt.Sprintf(`{"board":%q,"player":"p%d","keys":[%s]%s}`, b, rng.IntN(300), strings.Join(keys, ","), meta))
		}
		mustDo(t, 200, base, "POST", "/v1/scores", admin, `{"scores":[`+strings.Join(items, ",")+`]}`)
	}
	batch(1000)
	s.clock.Set(now.Add(-30 * time.Hour)) // new daily and maybe weekly/monthly periods
	batch(1000)
	call := func(path, key, body string) {
		code, b, _ := do(base, "POST", path, admin, body, "Idempotency-Key", key)
		if code != 200 {
			t.Fatalf("POST %s: %d %s", path, code, b)
		}
		s.replays = append(s.replays, idempotentCall{path: path, key: key, body: body, status: code, answer: b})
	}
	call("/v1/boards/m:sum/scores", "recent-1", `{"player":"p2","score":5,"meta":{"via":"retry"}}`)
	for _, p := range []struct{ id, body string }{
		{"alice", `{"name":"Alice","meta":{"country":"fr"}}`},
		{"p3", `{"name":"Three","hidden":true}`},
		{"p4", `{"name":"Four"}`},
	} {
		mustDo(t, 200, base, "PUT", "/v1/players/"+p.id, admin, p.body)
		s.players = append(s.players, p.id)
	}
	mustDo(t, 200, base, "POST", "/v1/boards/m:best/scores", admin, `{"player":"p5","keys":[1,1]}`)
	mustDo(t, 204, base, "DELETE", "/v1/boards/m:best/entries/p5?period=current", admin, "")
	s.clock.Set(now.Add(-time.Hour))
	batch(1000)
	call("/v1/scores", "recent-2", `{"scores":[{"board":"m:latest","player":"alice","score":7},{"board":"m:month","player":"p4","keys":[1,2,3]}]}`)
	s.recent = 2
	var k struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	json.Unmarshal(mustDo(t, 201, base, "POST", "/v1/keys", admin, `{"name":"game","scopes":["submit","read"],"boards":["m:"]}`), &k)
	s.gameKey = k.Key
	json.Unmarshal(mustDo(t, 201, base, "POST", "/v1/keys", admin, `{"name":"gone","scopes":["read"]}`), &k)
	mustDo(t, 204, base, "DELETE", "/v1/keys/"+k.ID, admin, "")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// Log rows the entries table does not reflect yet, as a crash between a
	// commit and the next checkpoint leaves them.
	st, err := sqlite.Open(filepath.Join(s.dir, dbName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last, err := st.LastSeq(context.Background(), "m:sum")
	if err != nil {
		t.Fatal(err)
	}
	var tail []podium.Submission
	for i := range 20 {
		sub := podium.Submission{Seq: last + uint64(i) + 1, Board: "m:sum", Period: "all", Player: fmt.Sprintf("p%d", i%7),
			Keys: []int64{int64(i)}, At: s.clock.Now()}
		if i == 10 {
			sub.Kind, sub.Keys = podium.KindDelete, nil
		}
		tail = append(tail, sub)
	}
	if err := st.Commit(context.Background(), &podium.Batch{Submissions: tail}); err != nil {
		t.Fatal(err)
	}
	s.tail = len(tail)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// copyDir copies the files of a data directory (not its lock).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(from)
	for _, e := range names {
		if e.Name() == lockName {
			continue
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// views reads, through the API, everything a client can see of the
// boards: each board, its periods, every period's entries (hidden players
// included), the keys and the registered players.
func (s *source) views(t *testing.T, base string) map[string]string {
	t.Helper()
	out := map[string]string{}
	get := func(path string) []byte {
		b := mustDo(t, 200, base, "GET", path, s.adminKey, "")
		out[path] = string(b)
		return b
	}
	get("/v1/boards")
	get("/v1/keys")
	for _, p := range s.players {
		get("/v1/players/" + p)
	}
	for _, b := range s.boards {
		get("/v1/boards/" + b)
		var ps struct {
			Periods []podium.PeriodCount `json:"periods"`
		}
		json.Unmarshal(get("/v1/boards/"+b+"/periods"), &ps)
		for _, p := range ps.Periods {
			get("/v1/boards/" + b + "/entries?limit=1000&include_hidden=true&period=" + p.ID)
		}
	}
	return out
}

func compareViews(t *testing.T, want, got map[string]string) {
	t.Helper()
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if got[p] != want[p] {
			t.Errorf("GET %s differs after the migration:\nsource: %.600s\ntarget: %.600s", p, want[p], got[p])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d reads on the target, %d on the source", len(got), len(want))
	}
}

// targetDSN is a schema of the test's own, its connections named so that
// no other test's podium connections count as its nodes.
func targetDSN(t *testing.T) (dsn, schema string) {
	t.Helper()
	dsn, schema = pgtest.Schema(t)
	return pgtest.WithParam(t, dsn, "application_name", "podium-"+schema), schema
}

// sqlExec runs statements on the target schema behind podium's back.
func sqlExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMigrate moves an embedded deployment to PostgreSQL: the command
// verifies its copy, and a server started on the target answers every read
// exactly as the embedded server did (the entries behind the log included),
// accepts the API keys' secrets and replays recent idempotent answers byte
// for byte.
func TestMigrate(t *testing.T) {
	dsn, _ := targetDSN(t)
	s := buildSource(t)

	// The reference: a server on a copy of the directory (it replays the
	// log tail; the original keeps it for migrate).
	ref := filepath.Join(t.TempDir(), "ref")
	copyDir(t, s.dir, ref)
	m := s.startOn(t, ref)
	want := s.views(t, m.URL())
	m.Close()

	code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn)
	t.Logf("migrate output:\n%s", out)
	if code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, errs)
	}
	for _, w := range []string{
		"migrate: verified: the target equals the data directory",
		"every node needs PODIUM_ADMIN_KEY",
		filepath.Join(s.dir, keyName),
		"board 5/5 m:sum",
		"FAIL", // must not appear: checked below
	} {
		if w == "FAIL" {
			if strings.Contains(out, w) {
				t.Errorf("output reports a failure")
			}
			continue
		}
		if !strings.Contains(out, w) {
			t.Errorf("output does not say %q", w)
		}
	}

	ctx := context.Background()
	dst, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := dst.IdempotencyRecords(ctx, time.Time{})
	dst.Close()
	if err != nil || len(recs) != s.recent {
		t.Fatalf("target holds %d idempotency records (%v), want the %d recent ones", len(recs), err, s.recent)
	}

	node := &Main{Config: Config{Addr: "127.0.0.1:0", DB: dsn, AdminKey: s.adminKey, Shutdown: time.Second},
		Now: s.clock.Now, Stderr: io.Discard}
	if err := node.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	compareViews(t, want, s.views(t, node.URL()))

	for _, c := range s.replays {
		code, b, hdr := do(node.URL(), "POST", c.path, s.adminKey, c.body, "Idempotency-Key", c.key)
		if code != c.status || string(b) != string(c.answer) || hdr.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry of %s on the target: %d %s (replayed %q), want %d %s", c.key, code, b, hdr.Get("Idempotent-Replayed"), c.status, c.answer)
		}
	}
	if code, b, _ := do(node.URL(), "POST", "/v1/boards/m:latest/scores", s.gameKey, `{"player":"new","score":3}`); code != 200 {
		t.Errorf("the game key on the target: %d %s", code, b)
	}
	if code, _, _ := do(node.URL(), "POST", "/v1/boards/m:latest/scores", s.gameKey+"x", `{"player":"new","score":3}`); code != 401 {
		t.Errorf("a wrong secret on the target: %d, want 401", code)
	}
}

// TestMigrateVerifyCatchesCorruption: after a good copy, rows changed in
// PostgreSQL behind podium's back (each table, each way) make the
// verification fail, and it names each of them.
func TestMigrateVerifyCatchesCorruption(t *testing.T) {
	dsn, _ := targetDSN(t)
	s := buildSource(t)
	if code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn); code != 0 {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn, "--verify-only"); code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("verify of a good copy: exit %d\n%s\n%s", code, out, errs)
	}
	first := func(board string) string {
		return fmt.Sprintf(`(board, period, player) IN (SELECT board, period, player FROM entries WHERE board = '%s' ORDER BY period, player LIMIT 1)`, board)
	}
	cases := []struct{ sql, want string }{
		{`UPDATE entries SET k1 = k1 + 1 WHERE ` + first("m:best"), "FAIL  board m:best"},
		{`UPDATE entries SET meta = '{"forged":true}' WHERE ` + first("m:latest"), `meta {"forged":true}`},
		{`UPDATE submissions SET player = 'mallory' WHERE board = 'm:sum' AND seq = 5`, `log seq 5: want kind 0`},
		{`DELETE FROM submissions WHERE board = 'm:month' AND seq = 3`, "log seq 3: missing from the target"},
		{`UPDATE players SET hidden = false WHERE id = 'p3'`, `player "p3": want name "Three" hidden true`},
		{`UPDATE api_keys SET hash = repeat('0', 64)`, `API key "`},
		{`UPDATE watermarks SET seq = seq - 1 WHERE board = 'm:sum'`, "watermark: want"},
		{`UPDATE boards SET body = replace(body, '"public":true', '"public":false') WHERE id = 'm:sum'`, `board "m:sum": want title "Sum"`},
		{`UPDATE idempotency SET body = 'x' WHERE key = 'recent-1'`, "idempotency record"},
	}
	for _, c := range cases {
		sqlExec(t, dsn, c.sql)
	}
	code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn, "--verify-only")
	if code != 1 || !strings.Contains(out, "verification FAILED") {
		t.Fatalf("verify after corruption: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, c := range cases {
		if !strings.Contains(out, c.want) {
			t.Errorf("after %s\nthe verification does not say %q", c.sql, c.want)
		}
	}
	// The entry changed behind podium's back also disagrees with the log.
	if !strings.Contains(out, "FAIL  target: entries vs a replay of its log") {
		t.Errorf("the store check of the target missed the changed entries:\n%s", out)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestMigrateResume: a migration that stopped half way (one board's log
// partly copied and its entries not written, a board and the idempotency
// records not copied yet) is refused without --resume, and completed with
// it: complete boards are skipped, the partial log is continued, and the
// result verifies. A target that holds what the source does not is not
// resumed.
func TestMigrateResume(t *testing.T) {
	dsn, _ := targetDSN(t)
	s := buildSource(t)
	if code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn); code != 0 {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	sqlExec(t, dsn,
		`DELETE FROM submissions WHERE board = 'm:month' AND seq > 100`,
		`UPDATE board_heads SET seq = 100 WHERE board = 'm:month'`,
		`DELETE FROM entries WHERE board = 'm:month'`,
		`DELETE FROM watermarks WHERE board = 'm:month'`,
		`DELETE FROM boards WHERE id = 'm:sum'`,
		`DELETE FROM submissions WHERE board = 'm:sum'`,
		`DELETE FROM board_heads WHERE board = 'm:sum'`,
		`DELETE FROM entries WHERE board = 'm:sum'`,
		`DELETE FROM watermarks WHERE board = 'm:sum'`,
		`DELETE FROM idempotency`,
	)
	code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn)
	if code != 1 || !strings.Contains(errs, "already holds 4 boards") || !strings.Contains(errs, "--resume") {
		t.Fatalf("migrate into a partial target without --resume: exit %d, want 1 and a hint to --resume\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "migrate", "--from", s.dir, "--db", dsn, "--resume")
	if code != 0 {
		t.Fatalf("migrate --resume: exit %d\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{
		"board 1/5 m:best: already complete in the target",
		"board 4/5 m:month: the target holds its log up to seq 100; copying the rest",
		"board 5/5 m:sum: 764 submissions",
		"migrate: 2 idempotency records",
		"migrate: verified",
	} {
		if w == "board 5/5 m:sum: 764 submissions" {
			w = "board 5/5 m:sum: " // the count depends on the seed
		}
		if !strings.Contains(out, w) {
			t.Errorf("migrate --resume does not say %q:\n%s", w, out)
		}
	}

	dst, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = dst.PutBoard(context.Background(), &podium.Board{ID: "zz:other", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}},
		Mode: podium.Best, Reset: podium.Reset{Every: podium.Never, TZ: "UTC"}})
	dst.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "migrate", "--from", s.dir, "--db", dsn, "--resume")
	if code != 1 || !strings.Contains(errs, `board "zz:other"`) || !strings.Contains(errs, "not a copy of this data directory") {
		t.Fatalf("--resume into a target with a board of its own: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestMigrateRefuses: migrate does not read a data directory that a server
// holds (it names the pid), nor fill a database that nodes use.
func TestMigrateRefuses(t *testing.T) {
	s := &source{dir: t.TempDir(), clock: &testClock{t: time.Now()}}
	m := s.startOn(t, s.dir)
	code, _, errs := runCLI(t, "migrate", "--from", s.dir, "--db", "postgres://127.0.0.1:1/nowhere")
	if want := fmt.Sprintf("pid %d", os.Getpid()); code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "stop that server first") {
		t.Errorf("migrate from a directory in use: exit %d, want 1 naming %s: %s", code, want, errs)
	}
	m.Close()

	dsn, schema := targetDSN(t)
	node, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if err := node.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "migrate", "--from", s.dir, "--db", dsn)
	if code != 1 || !strings.Contains(errs, `named "podium-`+schema+`", podium nodes`) || !strings.Contains(errs, "stop every node first") {
		t.Errorf("migrate into a database in use: exit %d, want 1: %s", code, errs)
	}
}

func TestOpsCommandLineMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "--db", "postgres://x/y"}, "podium migrate: --from is required"},
		{[]string{"migrate", "--from", "x"}, "podium migrate: --db is required"},
		{[]string{"migrate", "--from", "x", "--db", "mysql://x"}, `podium migrate: --db: "mysql://x" is not a postgres:// URL`},
		{[]string{"migrate", "--from", "x", "--db", "postgres://x/y", "--resume", "--verify-only"}, "do not go together"},
		{[]string{"check", "--url", "ftp://x"}, `podium check: --url: "ftp://x" is not an http:// or https:// URL`},
		{[]string{"check", "--db", "postgres://x/y", "--redis", "redis://x", "--env", "Bad Env"}, `podium check: --env: "Bad Env"`},
		{[]string{"check", "--redis", "http://x"}, `podium check: --redis: "http://x" is not a redis:// URL`},
		{[]string{"rebuild", "--db", "postgres://x/y", "--url", "http://n1:8080"}, "podium rebuild: --db runs with every node stopped"},
		{[]string{"rebuild", "--dry-run"}, "podium rebuild: --dry-run goes with --redis"},
		{[]string{"rebuild", "--redis", "redis://x", "--redis-max-keys", "0"}, "--redis-max-keys must be positive"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, errs := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, errs, tc.want)
			}
		})
	}
}

// headsStore is the target seen as a podium.SharedStore with the heads
// given: the verification of a migration checks that every board has a
// head at its last seq, which the nodes lock and follow.
type headsStore struct {
	*postgres.Store
	heads map[string]uint64
}

func (h *headsStore) Heads(context.Context) (map[string]uint64, error) { return h.heads, nil }
func (h *headsStore) Begin(context.Context, []string) (podium.WriteTx, error) {
	panic("not used by the verification")
}
func (h *headsStore) Changes(context.Context, int64, int) ([]podium.Change, error) {
	panic("not used by the verification")
}
func (h *headsStore) LastChange(context.Context) (int64, error) {
	panic("not used by the verification")
}
func (h *headsStore) LoadBoard(context.Context, string) (*podium.Board, error) {
	panic("not used by the verification")
}
func (h *headsStore) LoadPlayer(context.Context, string) (*podium.Player, error) {
	panic("not used by the verification")
}
func (h *headsStore) LoadKey(context.Context, string) (*podium.APIKey, error) {
	panic("not used by the verification")
}

var _ podium.SharedStore = (*headsStore)(nil)

// TestMigrateVerifiesHeads: on a shared store, a board without a head (a
// board without submissions whose head the store did not create) or with
// a head behind its log fails the verification.
func TestMigrateVerifiesHeads(t *testing.T) {
	dsn, _ := targetDSN(t)
	s := buildSource(t)
	if code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn); code != 0 {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	ctx := context.Background()
	src, err := sqlite.Open(filepath.Join(s.dir, dbName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	heads := map[string]uint64{}
	for _, b := range s.boards {
		if heads[b], err = src.LastSeq(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Now().Add(-idempotencyKept)
	if v, err := verifyMigration(ctx, src, &headsStore{dst, heads}, since, io.Discard); err != nil || v.problems != 0 {
		t.Fatalf("right heads: %d problems, %v", v.problems, err)
	}
	delete(heads, "m:empty")
	heads["m:sum"]--
	var out strings.Builder
	v, err := verifyMigration(ctx, src, &headsStore{dst, heads}, since, &out)
	if err != nil || v.problems != 2 || !strings.Contains(out.String(), "head: want seq 0, got none") ||
		!strings.Contains(out.String(), fmt.Sprintf("head: want seq %d, got %d", heads["m:sum"]+1, heads["m:sum"])) {
		t.Fatalf("missing and stale heads: %d problems, %v\n%s", v.problems, err, out.String())
	}
}

// txStore is the target seen as a podium.SharedStore whose boards have a
// head only when they were created in a write transaction (WriteTx.PutBoard
// creates the head of a new board; Store.PutBoard need not).
type txStore struct {
	headsStore
	created map[string]bool
}

func (s *txStore) Heads(ctx context.Context) (map[string]uint64, error) {
	heads := map[string]uint64{}
	for id := range s.created {
		seq, err := s.Store.LastSeq(ctx, id)
		if err != nil {
			return nil, err
		}
		heads[id] = seq
	}
	return heads, nil
}

func (s *txStore) Begin(_ context.Context, boards []string) (podium.WriteTx, error) {
	return &boardTx{s: s}, nil
}

// boardTx is a write transaction that only creates boards.
type boardTx struct{ s *txStore }

func (x *boardTx) Head(string) (uint64, uint64, bool) { panic("not used by migrate") }
func (x *boardTx) LastChange() int64                  { panic("not used by migrate") }
func (x *boardTx) Log(context.Context, string, uint64, func(*podium.Submission) error) error {
	panic("not used by migrate")
}
func (x *boardTx) Idempotency(context.Context, []podium.IdempotencyRef) ([]podium.IdempotencyRecord, error) {
	panic("not used by migrate")
}
func (x *boardTx) DeleteBoard(context.Context, string) error { panic("not used by migrate") }
func (x *boardTx) PutBoard(ctx context.Context, b *podium.Board) error {
	x.s.created[b.ID] = true
	return x.s.Store.PutBoard(ctx, b)
}
func (x *boardTx) Commit(_ context.Context, b *podium.Batch) error {
	if b.Len() != 0 {
		panic("migrate commits rows through the store")
	}
	return nil
}
func (x *boardTx) Rollback() {}

// TestMigrateCreatesBoardsInTransactions: into a shared store, migrate
// creates each board in a write transaction, so that every board, one
// without submissions included, has the head the nodes need.
func TestMigrateCreatesBoardsInTransactions(t *testing.T) {
	dsn, _ := targetDSN(t)
	s := buildSource(t)
	ctx := context.Background()
	src, err := sqlite.Open(filepath.Join(s.dir, dbName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	shared := &txStore{headsStore: headsStore{Store: dst}, created: map[string]bool{}}
	since := time.Now().Add(-idempotencyKept)
	m := &migration{src: src, dst: shared, out: io.Discard, since: since}
	if err := m.copy(ctx); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if v, err := verifyMigration(ctx, src, shared, since, &out); err != nil || v.problems != 0 {
		t.Fatalf("verify: %v problems, %v\n%s", v, err, out.String())
	}
	if len(shared.created) != len(s.boards) {
		t.Fatalf("%d boards created in a transaction, want %d", len(shared.created), len(s.boards))
	}
}
