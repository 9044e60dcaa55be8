package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium/contest"
)

// TestClusterFormats drives every competition format of issue 8 through
// the HTTP API of three `podium serve` nodes on one PostgreSQL schema
// (with Redis, and with PostgreSQL alone), every request to a random node
// from several goroutines, while one node is killed with SIGKILL and
// started again:
//
//   - aggregate boards (a require_all sum of bests over three best boards,
//     a best_k_sum with fill over two best_k boards and a best board) end
//     equal, on every node, to a reference computed from the acknowledged
//     submissions to their sources;
//   - the activity feed is the same on every node (ids and order), and a
//     best board's events are those a sequential replay of its
//     acknowledged submissions makes;
//   - a tournament whose window is a few seconds of real time is settled
//     by the schedulers of the three nodes racing for the lease: one run,
//     every player credited once with the points of their rank on every
//     points board, one tournament_settled event;
//   - a CTF contest with a freeze takes concurrent correct attempts for the
//     same (team, challenge) from different nodes: one is solved, the
//     others 409; the standings and the CTFtime export, frozen and live,
//     are identical on every node and equal to contest.Compute over the
//     accepted solves;
//   - the restarted node, from the first /readyz that says it serves,
//     holds every submission and solve acknowledged while it was down.
//
// Random: prints SEED, replays the choices with SEED= (the interleaving
// across processes is the machine's).
func TestClusterFormats(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("PODIUM_TEST_REDIS")
		if url == "" {
			t.Skip("PODIUM_TEST_REDIS is not set; skipping the formats cluster test with Redis")
		}
		testClusterFormats(t, url)
	})
	t.Run("postgres-only", func(t *testing.T) { testClusterFormats(t, "") })
}

// The boards of the test. Every board has one key, a time, ascending, so
// that the aggregates may sum them.
const (
	fmtKeys    = `[{"name":"ms","order":"asc"}]`
	fmtTourney = "cup"
	fmtContest = "ctf:c1"
	fmtWindow  = 4 * time.Second // the tournament's window
	fmtWeight  = 1000
)

var (
	fmtBest    = []string{"a1", "a2", "a3"}             // best boards
	fmtBestK   = map[string]int{"k1": 4, "k2": 2}       // best_k boards and their keep
	fmtSources = []string{"a1", "a2", "a3", "k1", "k2"} // what the workers write, with the tournament
	// fmtBK is the best_k_sum: source, k, fill.
	fmtBK = []struct {
		board   string
		k, fill int64
	}{{"k1", 3, 200000}, {"k2", 2, 300000}, {"a1", 1, 400000}}
	fmtTeams      = []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7"}
	fmtChallenges = map[string]string{
		"web":  `{"name":"Web","order":1,"scoring":{"function":"ctfd_logarithmic","value":500,"minimum":100,"decay":6}}`,
		"pwn":  `{"name":"Pwn","order":2,"scoring":{"function":"rctf","value":500,"minimum":100}}`,
		"rev":  `{"name":"Rev","order":3,"scoring":{"function":"gzctf","value":1000,"min_rate":0.25,"difficulty":3}}`,
		"misc": `{"name":"Misc","order":4,"scoring":{"function":"ctfd_linear","value":300,"minimum":50,"decay":40}}`,
		"warm": `{"name":"Warm-up","order":5,"scoring":{"value":100}}`,
	}
)

// fmtRun is one run of the test: the cluster and what it acknowledged.
type fmtRun struct {
	t    *testing.T
	c    *cluster
	seed uint64

	mu     sync.Mutex // guards the nodes' urls (kill, restart) and what follows
	acks   []ack      // acknowledged board submissions
	solves []contest.Solve
	// attempts: per (team, challenge), the outcome of each logical attempt.
	attempts map[[2]string][]string
	solvedBy map[[2]string]map[uint64]bool // distinct solve seqs per pair
	wrong    map[int64]bool                // ids of acknowledged wrong attempts
	dups     int                           // correct attempts refused as duplicates (409), each logged once

	tourneyEnd time.Time
	contest    contest.Contest
	challenges []contest.Challenge
	ctfDone    atomic.Bool
	closed     atomic.Int64 // tournament submissions refused as closed
	retries    atomic.Int64
}

func testClusterFormats(t *testing.T, redisURL string) {
	c := newClusterWith(t, 3, redisURL, func(int, string) []string { return []string{"--feed-cap", "1000"} })
	r := &fmtRun{t: t, c: c, seed: clusterSeed(t), attempts: map[[2]string][]string{},
		solvedBy: map[[2]string]map[uint64]bool{}, wrong: map[int64]bool{}}
	r.setup()

	const workers, perWorker = 8, 60
	var wg sync.WaitGroup
	var done atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(r.seed, uint64(w)))
			for i := 0; i < perWorker && !t.Failed(); i++ {
				board := fmtSources[rng.IntN(len(fmtSources))]
				if rng.IntN(3) == 0 {
					board = fmtTourney
				}
				player := fmt.Sprintf("p%d", rng.IntN(12))
				r.submit(rng, board, player, int64(1000+rng.IntN(99000)), fmt.Sprintf("w%d-%d-%d", w, i, r.seed))
				done.Add(1)
			}
		}(w)
	}
	// Two more goroutines play the tournament until it closes on them, so
	// that scores land on every node up to its end, racing the settlement.
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(r.seed, uint64(100+w)))
			for i, closed := 0, 0; closed < 3 && !t.Failed(); i++ {
				player := fmt.Sprintf("q%d", rng.IntN(6))
				if !r.submit(rng, fmtTourney, player, int64(1000+rng.IntN(99000)), fmt.Sprintf("t%d-%d-%d", w, i, r.seed)) {
					closed++
				}
				time.Sleep(time.Duration(10+rng.IntN(20)) * time.Millisecond)
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.ctfLoad(rand.New(rand.NewPCG(r.seed, 1000)))
		r.ctfDone.Store(true)
	}()

	// A node dies in the middle of the load and comes back.
	eventually(t, 30*time.Second, "a third of the load", func() string {
		if n := done.Load(); n < workers*perWorker/3 && !t.Failed() {
			return fmt.Sprintf("%d submissions", n)
		}
		return ""
	})
	r.mu.Lock()
	c.kill(2)
	solvesAtKill := len(r.solves)
	r.mu.Unlock()
	// It stays down while the others take a sixth of the load and a solve
	// or two (unless the contest's attempts are over).
	eventually(t, 30*time.Second, "load while a node is down", func() string {
		r.mu.Lock()
		solves := len(r.solves)
		r.mu.Unlock()
		if n := done.Load(); n < workers*perWorker/2 && !t.Failed() {
			return fmt.Sprintf("%d submissions", n)
		}
		if solves < solvesAtKill+2 && !r.ctfDone.Load() && !t.Failed() {
			return fmt.Sprintf("%d solves", solves)
		}
		return ""
	})
	r.restartChecked(2)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d acknowledged submissions (%d refused as the tournament had closed), %d solves, %d retries",
		len(r.acks), r.closed.Load(), len(r.solves), r.retries.Load())

	r.checkBoards()
	r.checkFeed()
	// The settlement is seen in the feed, which no node's scheduler reads:
	// a node asked for the tournament's status reloads the settlements,
	// which would hide a scheduler that settles again from a stale view.
	eventually(t, 15*time.Second, "the settlement in the feed", func() string {
		_, evs, _, err := feedIDs(c.nodes[0].url, "&board="+fmtTourney)
		for _, ev := range evs {
			if ev["kind"] == "tournament_settled" {
				return ""
			}
		}
		return fmt.Sprintf("no tournament_settled event yet (%v)", err)
	})
	// Every node's scheduler then takes two more looks at the settled
	// tournament (counted by its passes metric, not timed), and none may
	// have settled it again.
	urls := r.urls()
	before := make([]int, len(urls))
	for i, u := range urls {
		before[i] = schedulerPasses(t, u)
	}
	r.checkContest()
	for i, u := range urls {
		eventually(t, 30*time.Second, "two scheduler looks on "+u, func() string {
			if n := schedulerPasses(t, u); n < before[i]+2 {
				return fmt.Sprintf("%d looks since the settlement", n-before[i])
			}
			return ""
		})
	}
	r.checkTournament()
}

// urls returns the live nodes' urls.
func (r *fmtRun) urls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.c.liveURLs()
}

func (r *fmtRun) must(status int, base, method, path, body string) []byte {
	r.t.Helper()
	code, b, _ := do(base, method, path, clusterKey, body)
	if code != status {
		r.t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, code, b, status)
	}
	return b
}

// setup creates the boards, the tournament and the contest on node 1 and
// waits until every node knows them.
func (r *fmtRun) setup() {
	t, base := r.t, r.c.nodes[0].url
	for _, id := range fmtBest {
		r.must(201, base, "PUT", "/v1/boards/"+id, `{"keys":`+fmtKeys+`,"mode":"best","public":true}`)
	}
	for id, keep := range fmtBestK {
		r.must(201, base, "PUT", "/v1/boards/"+id, fmt.Sprintf(`{"keys":%s,"mode":"best_k","keep":%d,"public":true}`, fmtKeys, keep))
	}
	r.must(201, base, "PUT", "/v1/boards/sum3", `{"keys":`+fmtKeys+`,"public":true,"aggregate":{"kind":"sum_of_bests","require_all":true,
		"sources":[{"board":"a1"},{"board":"a2"},{"board":"a3"}]}}`)
	var srcs []string
	for _, s := range fmtBK {
		srcs = append(srcs, fmt.Sprintf(`{"board":%q,"k":%d,"fill":[%d]}`, s.board, s.k, s.fill))
	}
	r.must(201, base, "PUT", "/v1/boards/bk", `{"keys":`+fmtKeys+`,"public":true,"aggregate":{"kind":"best_k_sum","sources":[`+strings.Join(srcs, ",")+`]}}`)
	for id, def := range map[string]string{
		"pts:total":   `{"public":true,"mode":"sum","keys":[{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"total"}}`,
		"pts:weekly":  `{"public":true,"mode":"sum","keys":[{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"category","category":"weekly"}}`,
		"pts:current": `{"public":true,"mode":"sum","keys":[{"name":"era","order":"desc"},{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"current"}}`,
		"pts:best":    `{"public":true,"mode":"best","keys":[{"name":"rank","order":"asc"}],"points":{"ladder":"pts","kind":"best","series":"s1","by":"rank"}}`,
	} {
		r.must(201, base, "PUT", "/v1/boards/"+id, def)
	}
	now := time.Now().UTC()
	b := r.must(201, base, "PUT", "/v1/boards/"+fmtTourney, fmt.Sprintf(`{"keys":%s,"mode":"best","public":true,
		"tournament":{"start":%q,"end":%q,"weight":%d,"category":"weekly","series":"s1","ladder":"pts"}}`,
		fmtKeys, now.Add(-time.Second).Format(time.RFC3339Nano), now.Add(fmtWindow).Format(time.RFC3339Nano), fmtWeight))
	var tb struct{ Tournament struct{ End time.Time } }
	if err := json.Unmarshal(b, &tb); err != nil || tb.Tournament.End.IsZero() {
		t.Fatalf("tournament answer: %v %s", err, b)
	}
	r.tourneyEnd = tb.Tournament.End

	// The contest freezes about a second into the load: the public standings
	// then differ from the live ones.
	b = r.must(201, base, "PUT", "/v1/contests/"+fmtContest, fmt.Sprintf(`{"title":"C1","start":%q,"end":%q,"freeze":%q,"first_blood":[10,5,3],"public":true}`,
		now.Add(-time.Minute).Format(time.RFC3339Nano), now.Add(time.Hour).Format(time.RFC3339Nano), now.Add(1500*time.Millisecond).Format(time.RFC3339Nano)))
	if err := json.Unmarshal(b, &r.contest); err != nil {
		t.Fatalf("contest answer: %v %s", err, b)
	}
	for id, def := range fmtChallenges {
		b := r.must(201, base, "PUT", "/v1/contests/"+fmtContest+"/challenges/"+id, def)
		var ch contest.Challenge
		if err := json.Unmarshal(b, &ch); err != nil || ch.ID != id {
			t.Fatalf("challenge answer: %v %s", err, b)
		}
		r.challenges = append(r.challenges, ch)
	}

	boards := append(append([]string{"sum3", "bk", fmtTourney, "pts:total", "pts:weekly", "pts:current", "pts:best"}, fmtBest...), "k1", "k2")
	for _, nd := range r.c.nodes {
		eventually(t, 10*time.Second, "boards and contest known on "+nd.name, func() string {
			for _, id := range boards {
				if code, b, _ := do(nd.url, "GET", "/v1/boards/"+id, "", ""); code != 200 {
					return fmt.Sprintf("%s: %d %s", id, code, b)
				}
			}
			_, b, _ := do(nd.url, "GET", "/v1/contests/"+fmtContest+"/challenges", "", "")
			var chs struct{ Challenges []any }
			json.Unmarshal(b, &chs)
			if len(chs.Challenges) != len(fmtChallenges) {
				return "challenges: " + string(b)
			}
			return ""
		})
	}
}

// errCode is the error code of an answer's body.
func errCode(b []byte) string {
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(b, &e)
	return e.Error.Code
}

// submit sends one score to random nodes with an Idempotency-Key until it
// is acknowledged (or refused for good: the tournament closed, when it
// returns false).
func (r *fmtRun) submit(rng *rand.Rand, board, player string, ms int64, idem string) bool {
	t := r.t
	body := fmt.Sprintf(`{"player":%q,"keys":[%d]}`, player, ms)
	for attempt := 0; ; attempt++ {
		live := r.urls()
		base := live[rng.IntN(len(live))]
		code, b, hdr := do(base, "POST", "/v1/boards/"+board+"/scores", clusterKey, body, "Idempotency-Key", idem)
		switch {
		case code == 200:
			var res struct {
				Seq   uint64
				Entry struct{ At time.Time }
			}
			if err := json.Unmarshal(b, &res); err != nil || res.Seq == 0 {
				t.Errorf("answer: %v %s", err, b)
				return true
			}
			// The entry's time is the submission's, unless the answer was
			// rebuilt after its node died; a tournament takes none from
			// its end on (its best entry may be older).
			if board == fmtTourney && hdr.Get("Idempotent-Reconstructed") != "true" && !res.Entry.At.Before(r.tourneyEnd) {
				t.Errorf("a score to the tournament was taken at or after its end: %s", b)
			}
			r.mu.Lock()
			r.acks = append(r.acks, ack{board: board, player: player, keys: []int64{ms}, seq: res.Seq})
			r.mu.Unlock()
			return true
		case code == 409 && errCode(b) == "tournament_closed" && board == fmtTourney:
			if time.Now().Before(r.tourneyEnd) {
				t.Errorf("a score to the tournament was refused before its end: %s", b)
			}
			r.closed.Add(1)
			return false
		case code == 0 || code == 503 || code == 409 && errCode(b) == "conflict":
			// A killed node, nothing applied or the outcome unknown, or the
			// key in flight on another node: retry with the same key.
		default:
			t.Errorf("submit %s to %s: %d %s", body, base, code, b)
			return true
		}
		r.retries.Add(1)
		if attempt > 300 {
			t.Errorf("submission %s never acknowledged", idem)
			return true
		}
		time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
	}
}

// ctfLoad attempts pairs (team, challenge) in rounds: each pair three
// times at once, correct, from three nodes, with wrong attempts mixed in.
func (r *fmtRun) ctfLoad(rng *rand.Rand) {
	var pairs [][2]string
	for _, tm := range fmtTeams {
		for _, ch := range r.challenges {
			if rng.IntN(3) != 0 {
				pairs = append(pairs, [2]string{tm, ch.ID})
			}
		}
	}
	rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	n := 0
	for len(pairs) > 0 && !r.t.Failed() {
		round := pairs[:min(4, len(pairs))]
		pairs = pairs[len(round):]
		var wg sync.WaitGroup
		for _, p := range round {
			order := rng.Perm(3)
			for i := 0; i < 3; i++ {
				n++
				wg.Add(1)
				seed := rng.Uint64()
				go func(p [2]string, node, n int, correct bool) {
					defer wg.Done()
					r.attempt(rand.New(rand.NewPCG(seed, 0)), p, node, correct, fmt.Sprintf("a%d-%d", n, r.seed))
				}(p, order[i], n, true)
			}
			if rng.IntN(2) == 0 {
				n++
				r.attempt(rng, [2]string{fmtTeams[rng.IntN(len(fmtTeams))], p[1]}, rng.IntN(3), false, fmt.Sprintf("a%d-%d", n, r.seed))
			}
		}
		wg.Wait()
		time.Sleep(time.Duration(300+rng.IntN(200)) * time.Millisecond) // spread the rounds over the freeze
	}
}

// attempt reports one verdict, first to node (or a live one if it is
// down), retrying with its Idempotency-Key until it has an answer.
func (r *fmtRun) attempt(rng *rand.Rand, p [2]string, node int, correct bool, idem string) {
	t := r.t
	body := fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":%t}`, p[0], p[1], correct)
	for try := 0; ; try++ {
		r.mu.Lock()
		base := r.c.nodes[node].url
		r.mu.Unlock()
		if try > 0 || base == "" {
			live := r.urls()
			base = live[rng.IntN(len(live))]
		}
		code, b, _ := do(base, "POST", "/v1/contests/"+fmtContest+"/attempts", clusterKey, body, "Idempotency-Key", idem)
		switch {
		case code == 200:
			var res struct {
				Attempt struct {
					ID     int64
					Result string
					Seq    uint64
					At     time.Time
				}
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Errorf("attempt answer: %v %s", err, b)
				return
			}
			a := res.Attempt
			r.mu.Lock()
			defer r.mu.Unlock()
			switch {
			case !correct && a.Result == "wrong":
				r.wrong[a.ID] = true
			case correct && a.Result == "solved" && a.Seq > 0:
				r.attempts[p] = append(r.attempts[p], "solved")
				if r.solvedBy[p] == nil {
					r.solvedBy[p] = map[uint64]bool{}
				}
				if !r.solvedBy[p][a.Seq] {
					r.solvedBy[p][a.Seq] = true
					r.solves = append(r.solves, contest.Solve{Contest: fmtContest, Seq: a.Seq, Challenge: p[1], Team: p[0], At: a.At})
				}
			default:
				t.Errorf("attempt %s answered %s", body, b)
			}
			return
		case code == 409 && correct:
			r.mu.Lock()
			r.attempts[p] = append(r.attempts[p], "409")
			r.dups++
			r.mu.Unlock()
			return
		case code == 0 || code == 503:
		default:
			t.Errorf("attempt %s on %s: %d %s", body, base, code, b)
			return
		}
		r.retries.Add(1)
		if try > 300 {
			t.Errorf("attempt %s never answered", idem)
			return
		}
		time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
	}
}

// freePort returns a port that was free a moment ago, for a node that
// must be reachable before it logs its address.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// restartChecked starts node i again on a known port and polls its
// /readyz from the moment it starts: at the first answer that says it
// serves, the node must already hold every submission and solve
// acknowledged before it was started, while the load goes on. (What is
// committed while it loads, after it read a board's head, is the
// follower's, as on any node: the final checks see it.)
func (r *fmtRun) restartChecked(i int) {
	t := r.t
	nd := r.c.nodes[i]
	base := "http://127.0.0.1:" + freePort(t)
	nd.extra = append(nd.extra, "--addr", base[len("http://"):])
	// What was acknowledged before the node starts: all of it committed
	// before the node reads anything.
	r.mu.Lock()
	acks, solves := r.acks[:len(r.acks):len(r.acks)], r.solves[:len(r.solves):len(r.solves)]
	r.mu.Unlock()
	r.t.Logf("restarting %s with %d submissions and %d solves acknowledged", nd.name, len(acks), len(solves))
	result := make(chan string, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				result <- "the node never said it was ready"
				return
			default:
			}
			code, b, _ := do(base, "GET", "/readyz", "", "")
			if code == 200 {
				if !strings.Contains(string(b), `"status":"ready"`) {
					result <- "the first /readyz that serves is not ready: " + string(b)
					return
				}
				result <- r.caughtUp(base, acks, solves)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	cmd, url := startProcess(t, r.c.env, r.c.argsOf(i)...)
	if url != base {
		t.Fatalf("restarted node serves %s, want %s", url, base)
	}
	var msg string
	select {
	case msg = <-result:
	case <-time.After(20 * time.Second):
		msg = "no /readyz answer within 20 s of serving"
	}
	r.mu.Lock()
	nd.cmd, nd.url = cmd, url
	r.mu.Unlock()
	if msg != "" {
		t.Errorf("restarted %s at its first ready /readyz: %s", nd.name, msg)
	}
}

// schedulerPasses reads how many looks a node's settlement scheduler took.
func schedulerPasses(t *testing.T, base string) int {
	t.Helper()
	code, body, _ := do(base, "GET", "/metrics", clusterKey, "")
	if code != 200 {
		t.Fatalf("metrics of %s: %d", base, code)
	}
	l := grepMetric(body, "podium_settle_scheduler_passes_total")
	n, err := strconv.ParseFloat(strings.TrimPrefix(l, "podium_settle_scheduler_passes_total "), 64)
	if err != nil {
		t.Fatalf("metrics of %s: %q: %v", base, l, err)
	}
	return int(n)
}
