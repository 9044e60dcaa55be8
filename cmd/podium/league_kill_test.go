package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
)

// The kill -9 tests of league settlement (issue 21). A league settles only
// once its period (here a day) has ended, and `podium serve` reads the wall
// clock; so the child processes run the server through Main with a clock
// that reads an instant from a file the test writes (serveOnFileClock), and
// the test moves time forward across processes and restarts.

// serveOnFileClock is `podium serve args` in a child process whose clock
// is the instant in the file clockFile (RFC 3339, written by the parent).
// It returns the process's exit code.
func serveOnFileClock(ctx context.Context, argv []string, clockFile string) int {
	if len(argv) == 0 || argv[0] != "serve" {
		fmt.Fprintf(os.Stderr, "PODIUM_TEST_CLOCK_FILE is for serve, not %v\n", argv)
		return 2
	}
	var cfg Config
	fs := newFlagSet("serve", "", io.Discard)
	cfg.flags(fs)
	if err := parse(fs, argv[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg.AdminKey = os.Getenv("PODIUM_ADMIN_KEY")
	if stall := os.Getenv("PODIUM_TEST_STALL_FILE"); stall != "" {
		testHookWrapStore = func(s podium.Store) podium.Store { return stallSettlements(s, stall) }
	}
	m := &Main{Config: cfg, Stderr: os.Stderr, Now: fileClock(clockFile)}
	if err := m.Open(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	<-ctx.Done()
	if err := m.Close(); err != nil {
		return 1
	}
	return 0
}

// fileClock reads the instant in path at every call. The parent replaces
// the file by a rename, so a read sees the old instant or the new one.
func fileClock(path string) func() time.Time {
	var mu sync.Mutex
	var last time.Time
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		b, err := os.ReadFile(path)
		if err == nil {
			if at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil {
				last = at
			}
		}
		if last.IsZero() {
			panic(fmt.Sprintf("test clock %s: %v", path, err))
		}
		return last
	}
}

// stallSettlements wraps the store so that, while the file stall exists,
// a settlement stops on its way to the commit: computed, under the lease,
// nothing stored. It says so on stderr and waits to be killed.
func stallSettlements(s podium.Store, stall string) podium.Store {
	switch s := s.(type) {
	case *sqlite.Store:
		return &stallSQLite{s, stall}
	case *postgres.Store:
		return &stallPostgres{s, stall}
	}
	panic(fmt.Sprintf("stall settlements of a %T", s))
}

type stallSQLite struct {
	*sqlite.Store
	stall string
}

func (s *stallSQLite) LeaguePart(b *podium.LeagueBatch) podium.Part {
	stallIf(b, s.stall)
	return s.Store.LeaguePart(b)
}

type stallPostgres struct {
	*postgres.Store
	stall string
}

func (s *stallPostgres) LeaguePart(b *podium.LeagueBatch) podium.Part {
	stallIf(b, s.stall)
	return s.Store.LeaguePart(b)
}

const stalledMsg = "test: a league settlement stalled before its commit"

func stallIf(b *podium.LeagueBatch, stall string) {
	if b.Fence == nil || !slices.ContainsFunc(b.Periods, func(p podium.LeaguePeriod) bool { return p.Settled() }) {
		return // placements, not a settlement
	}
	if _, err := os.Stat(stall); err != nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: period=%s\n", stalledMsg, b.Periods[0].Period)
	select {} // until killed
}

// setFileClock sets the children's clock to at.
func setFileClock(t *testing.T, path string, at time.Time) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(at.UTC().Format(time.RFC3339Nano)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// clockedProc is a child server whose stderr goes to a file, kept for the
// test to read (whether it logged a settlement) and shown on failure.
type clockedProc struct {
	cmd    *exec.Cmd
	url    string
	log    string
	exited chan struct{} // closed once the child exited
}

// startClocked starts a child `podium serve args` on the file clock and
// waits until it serves. The child is killed when the test ends.
func startClocked(t *testing.T, clockFile, logFile string, env []string, args ...string) *clockedProc {
	t.Helper()
	argv, _ := json.Marshal(args)
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "PODIUM_TEST_RUN_MAIN="+string(argv), "PODIUM_TEST_CLOCK_FILE="+clockFile), env...)
	cmd.Stderr, cmd.Stdout = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p := &clockedProc{cmd: cmd, log: logFile, exited: exited}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("log of %s:\n%s", filepath.Base(logFile), b)
		}
	})
	eventually(t, 30*time.Second, "the child serves", func() string {
		b, _ := os.ReadFile(logFile)
		if m := servingURL.FindSubmatch(b); m != nil {
			p.url = string(m[1])
			return ""
		}
		select {
		case <-exited:
			t.Fatalf("podium %v exited before serving:\n%s", args, b)
		default:
		}
		return "not serving yet"
	})
	return p
}

// kill kills the child with SIGKILL, as a crash would, and reports whether
// it had logged the settlement of period (the kill came after the commit).
func (p *clockedProc) kill(t *testing.T, period string) (settled bool) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	return settledLogs(t, p.log, period) > 0
}

// settledLogs counts the settlements of period (not "already" settled)
// that the logs in files report.
func settledLogs(t *testing.T, files string, period string) int {
	t.Helper()
	names, err := filepath.Glob(files)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		b, _ := os.ReadFile(name)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `msg="league settled"`) && strings.Contains(l, "period="+period+" ") && strings.Contains(l, "already=false") {
				n++
			}
		}
	}
	return n
}

// The league of the kill tests: three tiers, cohorts of 8, 40 players.
var (
	killTiers    = []string{"bronze", "silver", "gold"}
	killPromote  = []int{3, 2, 0}
	killRelegate = []int{0, 2, 3}
)

const (
	killCohort  = 8
	killPlayers = 40
	killLeague  = `{"keys":[{"name":"xp","order":"desc"}],"mode":"best","public":true,
		"reset":{"every":"day","tz":"UTC"},"league":{"cohort_size":8,"absent":"keep","tiers":[
		{"name":"bronze","promote":3},{"name":"silver","promote":2,"relegate":2},{"name":"gold","relegate":3}]}}`
)

// killOutcome is what the settlement of one period must give a player.
type killOutcome struct {
	Tier     string `json:"tier"`
	Cohort   int    `json:"cohort"`
	Rank     int    `json:"rank"`
	Outcome  string `json:"outcome"`
	NextTier string `json:"next_tier"`
}

// leagueModel is the test's own account of a league: tiers by player, the
// placement rule (the k-th player placed in a tier goes to cohort k/size)
// and the zones (docs/API.md "Leagues"), independent of package league.
type leagueModel struct {
	tier map[string]int
}

// play places players in order with their scores and returns each one's
// expected outcome; it moves the model's tiers to the next period.
func (lm *leagueModel) play(order []string, score map[string]int) (map[string]killOutcome, int, int) {
	placed := make([]int, len(killTiers))
	type key struct{ tier, cohort int }
	cohorts := map[key][]string{}
	for _, p := range order {
		tr := lm.tier[p]
		k := key{tr, placed[tr] / killCohort}
		placed[tr]++
		cohorts[k] = append(cohorts[k], p)
	}
	out := map[string]killOutcome{}
	promoted, relegated := 0, 0
	for k, ms := range cohorts {
		slices.SortFunc(ms, func(a, b string) int { return score[b] - score[a] }) // desc, scores distinct
		for i, p := range ms {
			rank, next, outcome := i+1, k.tier, "stayed"
			switch {
			case k.tier < len(killTiers)-1 && rank <= killPromote[k.tier]:
				next, outcome = k.tier+1, "promoted"
				promoted++
			case k.tier > 0 && rank > len(ms)-killRelegate[k.tier]:
				next, outcome = k.tier-1, "relegated"
				relegated++
			}
			out[p] = killOutcome{Tier: killTiers[k.tier], Cohort: k.cohort, Rank: rank, Outcome: outcome, NextTier: killTiers[next]}
			lm.tier[p] = next
		}
	}
	return out, promoted, relegated
}

// One node on SQLite: each round, 40 players play a day of a league, the
// clock moves past the day's end, and the node is killed -9 a random
// moment later (before the scheduler's settlement commits, or after); a
// new process on the same data directory settles the day exactly once:
// one settlement, one league_settled event, every player's rank, outcome
// and next tier as their scores dictate, a tier moved once (a second
// application would move a promoted bronze player to gold), and a settle
// request afterwards is a no-op.
func TestLeagueSettleKilled(t *testing.T) {
	seed := clusterSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	clock, stall := filepath.Join(dir, "clock"), filepath.Join(dir, "stall")
	const key = "league-admin"
	env := []string{"PODIUM_ADMIN_KEY=" + key, "PODIUM_TEST_STALL_FILE=" + stall}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--feed-cap", "1000"}
	day := time.Date(2026, 11, 30, 0, 0, 1, 0, time.UTC)
	setFileClock(t, clock, day)

	n := 0
	start := func() *clockedProc {
		n++
		return startClocked(t, clock, filepath.Join(dir, fmt.Sprintf("node%d.log", n)), env, args...)
	}
	p := start()
	mustDo(t, http.StatusCreated, p.url, "PUT", "/v1/boards/lg", key, killLeague)

	lm := &leagueModel{tier: map[string]int{}}
	players := make([]string, killPlayers)
	for i := range players {
		players[i] = fmt.Sprintf("p%02d", i)
	}
	rounds := 5
	before, after := 0, 0
	var periods []string
	for r := 0; r < rounds; r++ {
		order := slices.Clone(players)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		score := map[string]int{}
		for i, v := range rng.Perm(1000)[:len(order)] {
			score[order[i]] = v + 1
		}
		for _, pl := range order {
			mustDo(t, http.StatusOK, p.url, "POST", "/v1/boards/lg/scores", key, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, pl, score[pl]))
		}
		period := leagueCurrent(t, p.url)
		periods = append(periods, period)
		want, promoted, relegated := lm.play(order, score)

		// Even rounds: the kill comes while the settlement is on its way
		// to the commit (computed, nothing stored). Odd rounds: a random
		// moment after the day's end, before or after the scheduler's
		// commit.
		stalled := r%2 == 0
		if stalled {
			writeFile(t, stall, "")
		}
		day = day.Add(24 * time.Hour)
		setFileClock(t, clock, day)
		var delay time.Duration
		if stalled {
			waitStalled(t, []*clockedProc{p}, period)
		} else {
			delay = time.Duration(rng.IntN(2500)) * time.Millisecond
			time.Sleep(delay) // the moment of the crash, not a synchronisation
		}
		committed := p.kill(t, period)
		os.Remove(stall)
		if stalled && committed {
			t.Fatalf("round %d: the stalled settlement of %s committed", r, period)
		}
		if committed {
			after++
		} else {
			before++
		}
		p = start()

		eventually(t, 60*time.Second, "period "+period+" settled after the restart", func() string {
			if s := leagueSettlement(t, p.url, period); s == nil {
				return "not settled"
			}
			return ""
		})
		s := leagueSettlement(t, p.url, period)
		if s.Players != killPlayers || s.Promoted != promoted || s.Relegated != relegated {
			t.Errorf("round %d (SEED=%d, kill %s after the day's end): settlement of %s %+v, want %d players, %d promoted, %d relegated",
				r, seed, delay, period, *s, killPlayers, promoted, relegated)
		}
		// The kill may fall between the commit and its log line: then
		// no process logs the settlement.
		if n := settledLogs(t, filepath.Join(dir, "node*.log"), period); n > 1 {
			t.Errorf("round %d (SEED=%d): %d processes logged a settlement of %s, want at most 1", r, seed, n, period)
		}
		checkOutcomes(t, p.url, period, want)
		settleIsNoop(t, p.url, key)
		checkSettledEvents(t, p.url, periods)
		t.Logf("round %d: %s settled (%d promoted, %d relegated); killed %s", r, period, promoted, relegated, killedWhen(stalled, committed, delay))
	}
	t.Logf("SEED=%d: %d kills before the settlement was logged, %d after", seed, before, after)
}

// leagueCurrent is the league's current period.
func leagueCurrent(t *testing.T, base string) string {
	t.Helper()
	var st struct{ Period string }
	if err := json.Unmarshal(mustDo(t, http.StatusOK, base, "GET", "/v1/leagues/lg", "", ""), &st); err != nil {
		t.Fatal(err)
	}
	return st.Period
}

type leagueSettled struct {
	Players   int    `json:"players"`
	Promoted  int    `json:"promoted"`
	Relegated int    `json:"relegated"`
	Epoch     int64  `json:"epoch"`
	Node      string `json:"node"`
}

// leagueSettlement is period's settlement as the league's status shows it,
// nil if none (or no answer: the node may be starting).
func leagueSettlement(t *testing.T, base, period string) *leagueSettled {
	t.Helper()
	code, b, _ := do(base, "GET", "/v1/leagues/lg", "", "")
	if code != http.StatusOK {
		return nil
	}
	var st struct {
		Periods []struct {
			Period     string
			Settlement *leagueSettled
		}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Periods {
		if p.Period == period {
			return p.Settlement
		}
	}
	return nil
}

// checkOutcomes checks each player's history: one settled entry for
// period, with the rank, outcome and next tier of want, and the player's
// standing now in their next tier.
func checkOutcomes(t *testing.T, base, period string, want map[string]killOutcome) {
	t.Helper()
	for p, w := range want {
		var h struct {
			Periods []struct {
				Period  string `json:"period"`
				Settled bool   `json:"settled"`
				killOutcome
			}
		}
		if err := json.Unmarshal(mustDo(t, http.StatusOK, base, "GET", "/v1/leagues/lg/players/"+p+"/history", "", ""), &h); err != nil {
			t.Fatal(err)
		}
		var got []killOutcome
		for _, e := range h.Periods {
			if e.Period == period {
				if !e.Settled {
					t.Errorf("%s: %s not settled in the history", p, period)
				}
				got = append(got, e.killOutcome)
			}
		}
		if len(got) != 1 || got[0] != w {
			t.Errorf("%s in %s: %+v, want one %+v", p, period, got, w)
		}
		var now struct {
			Tier   string
			Placed bool
		}
		if err := json.Unmarshal(mustDo(t, http.StatusOK, base, "GET", "/v1/leagues/lg/players/"+p, "", ""), &now); err != nil {
			t.Fatal(err)
		}
		if now.Tier != w.NextTier || now.Placed {
			t.Errorf("%s after %s: tier %q placed %v, want %q, not placed", p, period, now.Tier, now.Placed, w.NextTier)
		}
	}
}

// settleIsNoop asks for a settlement: nothing is due.
func settleIsNoop(t *testing.T, base, key string) {
	t.Helper()
	var out struct{ Settled []json.RawMessage }
	if err := json.Unmarshal(mustDo(t, http.StatusOK, base, "POST", "/v1/leagues/lg/settle", key, ""), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Settled) != 0 {
		t.Errorf("a second settle settled %s", out.Settled)
	}
}

// checkSettledEvents checks the feed: one league_settled event per settled
// period, no more.
func checkSettledEvents(t *testing.T, base string, periods []string) {
	t.Helper()
	var f struct {
		Events []struct{ Kind, Period string }
	}
	if err := json.Unmarshal(mustDo(t, http.StatusOK, base, "GET", "/v1/feed?board=lg&limit=1000", "", ""), &f); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range f.Events {
		if e.Kind == "league_settled" {
			got = append(got, e.Period)
		}
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(periods)); !slices.Equal(got, want) {
		t.Errorf("league_settled events for %v, want one for each of %v", got, want)
	}
}

// On two PostgreSQL nodes: each round, 40 players play a day (their first
// scores spread over both nodes), the clock moves past the day's end and,
// a random moment later, the node that holds the settlement lease (a
// random one if neither holds it yet) is killed -9; the clock then moves
// past the lease's life, and the other node settles the day exactly once
// (as on one node above). The killed node is started again for the next
// round.
func TestLeagueSettleKilledCluster(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	seed := clusterSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	clock, stall := filepath.Join(dir, "clock"), filepath.Join(dir, "stall")
	env := []string{"PODIUM_ADMIN_KEY=" + clusterKey, "PODIUM_TEST_STALL_FILE=" + stall}
	now := time.Date(2026, 11, 30, 0, 0, 1, 0, time.UTC)
	setFileClock(t, clock, now)
	names := []string{"node1", "node2"}
	n := 0
	start := func(i int) *clockedProc {
		n++
		return startClocked(t, clock, filepath.Join(dir, fmt.Sprintf("%s-%d.log", names[i], n)), env,
			"serve", "--addr", "127.0.0.1:0", "--db", dsn, "--poll-every", "200ms", "--node", names[i], "--feed-cap", "1000")
	}
	nodes := []*clockedProc{start(0), start(1)}
	mustDo(t, http.StatusCreated, nodes[0].url, "PUT", "/v1/boards/lg", clusterKey, killLeague)
	eventually(t, 30*time.Second, "node2 knows the league", func() string {
		if code, _, _ := do(nodes[1].url, "GET", "/v1/leagues/lg", "", ""); code != http.StatusOK {
			return fmt.Sprint(code)
		}
		return ""
	})

	lm := &leagueModel{tier: map[string]int{}}
	players := make([]string, killPlayers)
	for i := range players {
		players[i] = fmt.Sprintf("p%02d", i)
	}
	var periods []string
	for r := 0; r < 3; r++ {
		order := slices.Clone(players)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		score := map[string]int{}
		for i, v := range rng.Perm(1000)[:len(order)] {
			score[order[i]] = v + 1
		}
		for i, pl := range order {
			mustDo(t, http.StatusOK, nodes[i%2].url, "POST", "/v1/boards/lg/scores", clusterKey, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, pl, score[pl]))
		}
		period := leagueCurrent(t, nodes[0].url)
		periods = append(periods, period)
		want, promoted, relegated := lm.play(order, score)

		// Even rounds: the node whose settlement is on its way to the
		// commit (the lease holder) is killed. Odd rounds: a random moment
		// after the day's end, the lease holder if there is one.
		stalled := r%2 == 0
		if stalled {
			writeFile(t, stall, "")
		}
		now = now.Add(24 * time.Hour)
		setFileClock(t, clock, now)
		var delay time.Duration
		victim := -1
		if stalled {
			victim = waitStalled(t, nodes, period)
			if h := leaseHolder(t, dsn, now); h != names[victim] {
				t.Fatalf("round %d: %s stalled its settlement, the lease holder is %q", r, names[victim], h)
			}
		} else {
			delay = time.Duration(rng.IntN(2000)) * time.Millisecond
			time.Sleep(delay) // the moment of the crash, not a synchronisation
			if victim = slices.Index(names, leaseHolder(t, dsn, now)); victim < 0 {
				victim = rng.IntN(2)
			}
		}
		committed := nodes[victim].kill(t, period)
		os.Remove(stall)
		if stalled && committed {
			t.Fatalf("round %d: the stalled settlement of %s committed", r, period)
		}
		// The victim's lease, if it held one, expires; the other node may
		// take it.
		now = now.Add(31 * time.Second)
		setFileClock(t, clock, now)
		other := nodes[1-victim]
		eventually(t, 60*time.Second, "period "+period+" settled by "+names[1-victim], func() string {
			if s := leagueSettlement(t, other.url, period); s == nil {
				return "not settled"
			}
			return ""
		})
		s := leagueSettlement(t, other.url, period)
		if s.Players != killPlayers || s.Promoted != promoted || s.Relegated != relegated {
			t.Errorf("round %d (SEED=%d, %s killed %s after the day's end): settlement of %s %+v, want %d players, %d promoted, %d relegated",
				r, seed, names[victim], delay, period, *s, killPlayers, promoted, relegated)
		}
		if n := settledLogs(t, filepath.Join(dir, "node*.log"), period); n > 1 {
			t.Errorf("round %d (SEED=%d): %d processes logged a settlement of %s, want at most 1", r, seed, n, period)
		}
		checkOutcomes(t, other.url, period, want)
		settleIsNoop(t, other.url, clusterKey)
		checkSettledEvents(t, other.url, periods)
		t.Logf("round %d: %s settled by %s (epoch %d; %d promoted, %d relegated); %s killed %s", r, period,
			s.Node, s.Epoch, promoted, relegated, names[victim], killedWhen(stalled, committed, delay))

		nodes[victim] = start(victim)
		settleIsNoop(t, nodes[victim].url, clusterKey)
	}
}

// waitStalled waits until one of ps stalls its settlement of period and
// returns its index.
func waitStalled(t *testing.T, ps []*clockedProc, period string) int {
	t.Helper()
	at := -1
	eventually(t, 60*time.Second, "a settlement of "+period+" stalled", func() string {
		for i, p := range ps {
			b, _ := os.ReadFile(p.log)
			if strings.Contains(string(b), stalledMsg+": period="+period+"\n") {
				at = i
				return ""
			}
		}
		return "not yet"
	})
	return at
}

func killedWhen(stalled, committed bool, delay time.Duration) string {
	switch {
	case stalled:
		return "with its settlement computed, under the lease, not committed"
	case committed:
		return fmt.Sprintf("%s after the day's end, after the settlement committed", delay)
	}
	return fmt.Sprintf("%s after the day's end, before the settlement was logged", delay)
}

func writeFile(t *testing.T, name, s string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// leaseHolder is the node that holds the league settlement lease at now,
// "" if none does.
func leaseHolder(t *testing.T, dsn string, now time.Time) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var holder string
	err = conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = 'league-settlement' AND expires_ms > $1`, now.UnixMilli()).Scan(&holder)
	if err != nil && err != pgx.ErrNoRows {
		t.Fatal(err)
	}
	return holder
}
