package main

import (
	"bytes"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/internal/testredis"
)

// A cluster of podium processes on one PostgreSQL schema, with or without
// Redis, for the tests of several nodes.
type cluster struct {
	t     *testing.T
	env   []string
	args  []string
	nodes []*clusterNode
}

type clusterNode struct {
	name  string
	extra []string // flags of this node only (a later flag wins)
	cmd   *exec.Cmd
	url   string
}

const clusterKey = "cluster-admin"

func newCluster(t *testing.T, n int, redisURL string) *cluster {
	t.Helper()
	return newClusterWith(t, n, redisURL, nil)
}

// newClusterWith starts n nodes; extra(i, dsn) gives node i flags of its
// own (nil: none).
func newClusterWith(t *testing.T, n int, redisURL string, extra func(i int, dsn string) []string) *cluster {
	t.Helper()
	dsn, _ := pgtest.Schema(t)
	c := &cluster{t: t, env: []string{"PODIUM_ADMIN_KEY=" + clusterKey},
		args: []string{"serve", "--addr", "127.0.0.1:0", "--db", dsn, "--poll-every", "200ms"}}
	if redisURL != "" {
		var rnd [4]byte
		crand.Read(rnd[:])
		c.args = append(c.args, "--redis", redisURL, "--env", "test-"+hex.EncodeToString(rnd[:]))
	}
	for i := 0; i < n; i++ {
		nd := &clusterNode{name: fmt.Sprintf("node%d", i+1)}
		if extra != nil {
			nd.extra = extra(i, dsn)
		}
		c.nodes = append(c.nodes, nd)
		c.start(i)
	}
	return c
}

// start starts node i (again).
func (c *cluster) start(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.cmd, nd.url = startProcess(c.t, c.env, c.argsOf(i)...)
}

// startLocked starts node i again while other goroutines read the nodes'
// urls under mu: it publishes the new url under mu.
func (c *cluster) startLocked(i int, mu sync.Locker) {
	c.t.Helper()
	cmd, url := startProcess(c.t, c.env, c.argsOf(i)...)
	mu.Lock()
	c.nodes[i].cmd, c.nodes[i].url = cmd, url
	mu.Unlock()
}

// argsOf is the command line of node i.
func (c *cluster) argsOf(i int) []string {
	nd := c.nodes[i]
	return append(append(append([]string(nil), c.args...), "--node", nd.name), nd.extra...)
}

// kill kills node i with SIGKILL, as a crash would.
func (c *cluster) kill(i int) {
	nd := c.nodes[i]
	nd.cmd.Process.Signal(syscall.SIGKILL)
	nd.cmd.Wait()
	nd.url = ""
}

var clusterClient = &http.Client{Timeout: 10 * time.Second}

// do sends a request to a node; status 0 means no answer.
func do(base, method, path, key, body string, hdr ...string) (int, []byte, http.Header) {
	if base == "" {
		return 0, nil, nil
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := clusterClient.Do(req)
	if err != nil {
		return 0, nil, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header
}

// eventually retries check until it returns "" or within passes.
func eventually(t *testing.T, within time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, within, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func clusterSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("SEED=%d", seed)
	return seed
}

// ack is one acknowledged submission.
type ack struct {
	board, player string
	keys          []int64
	seq           uint64
	rank          int    // 0 when the answer was rebuilt after its node died
	at            string // "" then, too
}

// TestClusterRandomLoad: three nodes on one database (with Redis, and with
// PostgreSQL alone). Random submissions go to random nodes from many
// goroutines, every one with an Idempotency-Key and retried with it until
// it is acknowledged, while one node is killed with SIGKILL and started
// again. Afterwards every node returns identical rankings, equal to a
// reference computed from the acknowledged submissions; each sum was
// counted exactly once; and every rank in an answer of the sum board is the
// rank the reference gives at that seq.
func TestClusterRandomLoad(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("PODIUM_TEST_REDIS")
		if url == "" {
			t.Skip("PODIUM_TEST_REDIS is not set; skipping the cluster test with Redis")
		}
		testClusterLoad(t, url)
	})
	t.Run("postgres-only", func(t *testing.T) { testClusterLoad(t, "") })
}

func testClusterLoad(t *testing.T, redisURL string) {
	c := newCluster(t, 3, redisURL)
	seed := clusterSeed(t)
	boards := map[string]string{
		"s": `{"keys":[{"name":"points","order":"desc"}],"mode":"sum","public":true}`,
		"b": `{"keys":[{"name":"time","order":"asc"},{"name":"bonus","order":"desc"}],"mode":"best","public":true}`,
	}
	for id, body := range boards {
		if code, b, _ := do(c.nodes[0].url, "PUT", "/v1/boards/"+id, clusterKey, body); code != 201 {
			t.Fatalf("create %s: %d %s", id, code, b)
		}
	}
	for _, nd := range c.nodes {
		eventually(t, 5*time.Second, "boards known on "+nd.name, func() string {
			for id := range boards {
				if code, b, _ := do(nd.url, "GET", "/v1/boards/"+id, "", ""); code != 200 {
					return fmt.Sprintf("%s: %d %s", id, code, b)
				}
			}
			return ""
		})
	}

	var (
		mu      sync.Mutex
		acks    []ack
		urls    = func() []string { mu.Lock(); defer mu.Unlock(); return c.liveURLs() }
		retries atomic.Int64
	)
	const workers, perWorker = 12, 150
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < perWorker; i++ {
				board := "s"
				var keys []int64
				if r.IntN(2) == 0 {
					keys = []int64{int64(r.IntN(100) + 1)}
				} else {
					board = "b"
					keys = []int64{int64(r.IntN(1000)), int64(r.IntN(10))}
				}
				player := fmt.Sprintf("p%d", r.IntN(15))
				body, _ := json.Marshal(map[string]any{"player": player, "keys": keys})
				idem := fmt.Sprintf("w%d-%d-%d", w, i, seed)
				for attempt := 0; ; attempt++ {
					live := urls()
					base := live[r.IntN(len(live))]
					code, b, hdr := do(base, "POST", "/v1/boards/"+board+"/scores", clusterKey, string(body), "Idempotency-Key", idem)
					if code == 200 {
						var res struct {
							Seq   uint64 `json:"seq"`
							Entry struct {
								Rank int    `json:"rank"`
								At   string `json:"at"`
								Seq  uint64 `json:"seq"`
							} `json:"entry"`
						}
						if err := json.Unmarshal(b, &res); err != nil {
							t.Errorf("answer: %v %s", err, b)
							return
						}
						a := ack{board: board, player: player, keys: keys, seq: res.Seq, rank: res.Entry.Rank, at: res.Entry.At}
						if hdr.Get("Idempotent-Reconstructed") == "true" {
							// The first try was committed on a node that died
							// before storing its answer: the seq is the
							// submission's, the entry is today's.
							a.rank, a.at = 0, ""
						}
						mu.Lock()
						acks = append(acks, a)
						mu.Unlock()
						break
					}
					// No answer (a killed node), 503 (nothing applied, or
					// the outcome is unknown) or 409 (the key is in flight
					// on another node): retry with the same key.
					if code != 0 && code != 503 && code != 409 {
						t.Errorf("submit to %s: %d %s", base, code, b)
						return
					}
					retries.Add(1)
					if attempt > 200 {
						t.Errorf("submission %s never acknowledged", idem)
						return
					}
					time.Sleep(time.Duration(5+r.IntN(20)) * time.Millisecond)
				}
			}
		}(w)
	}
	// A node dies in the middle of the load and comes back.
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	c.kill(2)
	mu.Unlock()
	time.Sleep(300 * time.Millisecond)
	c.startLocked(2, &mu)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d acknowledged submissions, %d retries", len(acks), retries.Load())

	// Every node converges on the same rankings, equal to the reference.
	for id := range boards {
		want := reference(t, id, acks)
		for _, nd := range c.nodes {
			eventually(t, 10*time.Second, "ranking of "+id+" on "+nd.name, func() string {
				got := ranking(nd.url, id)
				if got != want {
					return fmt.Sprintf("\n got %s\nwant %s", got, want)
				}
				return ""
			})
		}
		first := rawEntries(c.nodes[0].url, id)
		for _, nd := range c.nodes[1:] {
			if got := rawEntries(nd.url, id); got != first {
				t.Errorf("%s differs between node1 and %s:\n%s\n%s", id, nd.name, first, got)
			}
		}
	}
	checkSumRanks(t, acks)
}

func (c *cluster) liveURLs() []string {
	var out []string
	for _, nd := range c.nodes {
		if nd.url != "" {
			out = append(out, nd.url)
		}
	}
	return out
}

// reference is the ranking the acknowledged submissions make, as
// "player:keys" in rank order with ties (equal keys) listed by player, as
// ranking prints them.
func reference(t *testing.T, board string, acks []ack) string {
	t.Helper()
	orders := []podium.Order{podium.Desc}
	if board == "b" {
		orders = []podium.Order{podium.Asc, podium.Desc}
	}
	cur := map[string][]int64{}
	for _, a := range acks {
		if a.board != board {
			continue
		}
		old, ok := cur[a.player]
		switch {
		case !ok:
			cur[a.player] = append([]int64(nil), a.keys...)
		case board == "s":
			cur[a.player] = []int64{old[0] + a.keys[0]}
		case podium.Better(orders, a.keys, old):
			cur[a.player] = append([]int64(nil), a.keys...)
		}
	}
	return formatRanking(cur, orders)
}

func formatRanking(cur map[string][]int64, orders []podium.Order) string {
	players := make([]string, 0, len(cur))
	for p := range cur {
		players = append(players, p)
	}
	sort.Slice(players, func(i, j int) bool {
		if c := podium.CompareKeys(orders, cur[players[i]], cur[players[j]]); c != 0 {
			return c < 0
		}
		return players[i] < players[j]
	})
	var b strings.Builder
	for _, p := range players {
		fmt.Fprintf(&b, "%s:%v ", p, cur[p])
	}
	return b.String()
}

// ranking reads a board from a node in the reference's format, checking
// that the node's own order is consistent with the keys.
func ranking(base, board string) string {
	code, body, _ := do(base, "GET", "/v1/boards/"+board+"/entries?limit=1000", "", "")
	if code != 200 {
		return fmt.Sprintf("status %d %s", code, body)
	}
	var page struct {
		Entries []struct {
			Player string  `json:"player"`
			Keys   []int64 `json:"keys"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return err.Error()
	}
	orders := []podium.Order{podium.Desc}
	if board == "b" {
		orders = []podium.Order{podium.Asc, podium.Desc}
	}
	cur := map[string][]int64{}
	for i, e := range page.Entries {
		if i > 0 && podium.CompareKeys(orders, page.Entries[i-1].Keys, e.Keys) > 0 {
			return fmt.Sprintf("out of order at rank %d", i+1)
		}
		cur[e.Player] = e.Keys
	}
	return formatRanking(cur, orders)
}

// rawEntries is a board's entries as a node prints them, seq aside.
func rawEntries(base, board string) string {
	_, body, _ := do(base, "GET", "/v1/boards/"+board+"/entries?limit=1000", "", "")
	var page map[string]any
	json.Unmarshal(body, &page)
	delete(page, "seq")
	b, _ := json.Marshal(page)
	return string(b)
}

// checkSumRanks checks the rank in every answer of the sum board against
// the reference at that answer's seq: the rank must reflect every
// submission acknowledged before it, whichever node took it. Ties are
// broken by the entry's time, which each answer carries (a sum entry
// changes at every submission), then by seq.
func checkSumRanks(t *testing.T, acks []ack) {
	t.Helper()
	var list []ack
	for _, a := range acks {
		if a.board == "s" {
			list = append(list, a)
		}
	}
	slices.SortFunc(list, func(a, b ack) int { return int(a.seq) - int(b.seq) })
	for i := 1; i < len(list); i++ {
		if list[i].seq == list[i-1].seq {
			t.Fatalf("seq %d acknowledged twice", list[i].seq)
		}
	}
	type state struct {
		total int64
		at    string
		seq   uint64
	}
	cur := map[string]*state{}
	bad := 0
	for _, a := range list {
		st := cur[a.player]
		if st == nil {
			st = &state{}
			cur[a.player] = st
		}
		st.total += a.keys[0]
		st.at, st.seq = a.at, a.seq
		if a.rank == 0 {
			// A rebuilt answer: its time and rank are today's. Every other
			// answer's at is its submission's, so a tie with this entry
			// cannot be broken: stop checking ranks from here.
			return
		}
		rank := 1
		for p, o := range cur {
			if p == a.player {
				continue
			}
			if o.total > st.total || o.total == st.total && (o.at < st.at || o.at == st.at && o.seq < st.seq) {
				rank++
			}
		}
		if rank != a.rank && bad < 5 {
			t.Errorf("the answer at seq %d gave %s rank %d; the submissions before it make it %d", a.seq, a.player, a.rank, rank)
			bad++
		}
	}
}

// TestClusterMetadataAndIdempotency: what one node changes takes effect on
// the others (a board made private, a player hidden, a key revoked), and an
// Idempotency-Key holds across nodes: a retry on another node gets the same
// answer byte for byte, another body gets 409.
func TestClusterMetadataAndIdempotency(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	c := newCluster(t, 2, os.Getenv("PODIUM_TEST_REDIS"))
	a, b := c.nodes[0].url, c.nodes[1].url
	if code, body, _ := do(a, "PUT", "/v1/boards/m", clusterKey, `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "board on node2", func() string {
		if code, _, _ := do(b, "GET", "/v1/boards/m", "", ""); code != 200 {
			return strconv.Itoa(code)
		}
		return ""
	})

	// Idempotency across nodes.
	code, first, _ := do(a, "POST", "/v1/boards/m/scores", clusterKey, `{"player":"x","score":5}`, "Idempotency-Key", "k1")
	if code != 200 {
		t.Fatalf("first: %d %s", code, first)
	}
	code, again, hdr := do(b, "POST", "/v1/boards/m/scores", clusterKey, `{"player":"x","score":5}`, "Idempotency-Key", "k1")
	if code != 200 || !bytes.Equal(again, first) || hdr.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry on another node: %d %s (first %s)", code, again, first)
	}
	if code, body, _ := do(b, "POST", "/v1/boards/m/scores", clusterKey, `{"player":"x","score":6}`, "Idempotency-Key", "k1"); code != 409 {
		t.Fatalf("same key, other body, other node: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "the sum on node2", func() string {
		_, body, _ := do(b, "GET", "/v1/boards/m/entries/x", "", "")
		if !strings.Contains(string(body), `"keys":[5]`) {
			return string(body)
		}
		return ""
	})

	// A player hidden on one node is hidden on the other.
	do(a, "POST", "/v1/boards/m/scores", clusterKey, `{"player":"y","score":1}`)
	if code, body, _ := do(a, "PUT", "/v1/players/y", clusterKey, `{"name":"Y","hidden":true}`); code != 200 {
		t.Fatalf("hide: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "hidden player on node2", func() string {
		_, body, _ := do(b, "GET", "/v1/boards/m/entries", "", "")
		if strings.Contains(string(body), `"player":"y"`) {
			return string(body)
		}
		return ""
	})

	// A key revoked on one node stops working on the other.
	code, body, _ := do(a, "POST", "/v1/keys", clusterKey, `{"name":"game","scopes":["submit","read"]}`)
	if code != 201 {
		t.Fatalf("create key: %d %s", code, body)
	}
	var key struct{ ID, Key string }
	json.Unmarshal(body, &key)
	eventually(t, 5*time.Second, "new key on node2", func() string {
		if code, body, _ := do(b, "POST", "/v1/boards/m/scores", key.Key, `{"player":"z","score":1}`); code != 200 {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	if code, body, _ := do(a, "DELETE", "/v1/keys/"+key.ID, clusterKey, ""); code != 204 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "revoked key on node2", func() string {
		if code, body, _ := do(b, "POST", "/v1/boards/m/scores", key.Key, `{"player":"z","score":1}`); code != 401 {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})

	// A board made private on one node stops answering anonymous reads
	// on the other.
	if code, body, _ := do(a, "PUT", "/v1/boards/m", clusterKey, `{"public":false}`); code != 200 {
		t.Fatalf("make private: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "private board on node2", func() string {
		if code, body, _ := do(b, "GET", "/v1/boards/m/entries", "", ""); code != 404 {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
}

// TestClusterRedisRestart: Redis dies during the load and comes back
// empty; the nodes go on taking writes and serving reads, /readyz says the
// broker is down and then up again, and no acknowledged submission is lost.
func TestClusterRedisRestart(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	srv := testredis.Start(t, os.Getenv("PODIUM_TEST_REDIS") != "")
	c := newCluster(t, 2, srv.URL())
	a, b := c.nodes[0].url, c.nodes[1].url
	if code, body, _ := do(a, "PUT", "/v1/boards/r", clusterKey, `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var total atomic.Int64
	submit := func(base string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			code, body, _ := do(base, "POST", "/v1/boards/r/scores", clusterKey, fmt.Sprintf(`{"player":"p%d","score":1}`, i%7))
			if code != 200 {
				t.Fatalf("submit while Redis restarts: %d %s", code, body)
			}
			total.Add(1)
		}
	}
	sum := func(base string) int64 {
		_, body, _ := do(base, "GET", "/v1/boards/r/entries?limit=100", "", "")
		var page struct{ Entries []struct{ Keys []int64 } }
		json.Unmarshal(body, &page)
		var s int64
		for _, e := range page.Entries {
			s += e.Keys[0]
		}
		return s
	}
	readyz := func(base string) string {
		_, body, _ := do(base, "GET", "/readyz", "", "")
		return string(body)
	}
	submit(a, 50)
	srv.Stop()
	eventually(t, 10*time.Second, "readyz says the broker is down", func() string {
		if r := readyz(b); !strings.Contains(r, `"degraded"`) || !strings.Contains(r, "broker") {
			return r
		}
		return ""
	})
	submit(a, 50)
	submit(b, 50)
	eventually(t, 10*time.Second, "node2 sees node1's writes by polling", func() string {
		if s := sum(b); s != total.Load() {
			return fmt.Sprintf("sum %d, want %d", s, total.Load())
		}
		return ""
	})
	srv.Restart()
	eventually(t, 15*time.Second, "readyz says ready again", func() string {
		for _, u := range []string{a, b} {
			if r := readyz(u); !strings.Contains(r, `"ready"`) {
				return r
			}
		}
		return ""
	})
	submit(b, 50)
	for _, u := range []string{a, b} {
		eventually(t, 10*time.Second, "every node has every submission", func() string {
			if s := sum(u); s != total.Load() {
				return fmt.Sprintf("sum %d, want %d", s, total.Load())
			}
			return ""
		})
	}
}
