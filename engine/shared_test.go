package engine_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
)

// Shared mode: several engines (nodes) on one PostgreSQL schema.

var bg = context.Background()

// cluster is the database several nodes share.
type cluster struct {
	t   testing.TB
	dsn string
	env string // the broker's deployment: notices stay within the test
}

func newCluster(t testing.TB) *cluster {
	dsn, schema := pgtest.Schema(t)
	var b [4]byte
	rand.Read(b[:])
	return &cluster{t: t, dsn: pgtest.WithParam(t, dsn, "application_name", schema), env: "test-" + hex.EncodeToString(b[:])}
}

type node struct {
	store  *postgres.Store
	broker *postgres.Broker
	eng    *engine.Engine
}

// nodeOpts configures a node; the zero value is a node with a broker that
// polls every 100 ms.
type nodeOpts struct {
	store    postgres.Options
	noBroker bool
	poll     time.Duration
	// wrap, when set, gives the store the engine uses in place of the
	// node's own (a test's wrapper that hooks or cuts some calls).
	wrap func(*postgres.Store) podium.Store
}

// open opens a node's store and broker; start starts its engine.
func (c *cluster) open(name string, o nodeOpts) (*node, engine.Config) {
	t := c.t
	t.Helper()
	st, err := postgres.Open(bg, c.dsn, o.store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n := &node{store: st}
	cfg := engine.Config{Store: st, Node: name, PollEvery: cmpOr(o.poll, 100*time.Millisecond),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if !o.noBroker {
		if n.broker, err = postgres.NewBroker(c.dsn, postgres.BrokerOptions{Env: c.env, Logger: cfg.Logger}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.broker.Close() })
		cfg.Broker = n.broker
	}
	if o.wrap != nil {
		cfg.Store = o.wrap(st)
	}
	return n, cfg
}

func (c *cluster) start(name string, o nodeOpts) *node {
	c.t.Helper()
	n, cfg := c.open(name, o)
	n.eng = modules.Engine(cfg)
	if err := n.eng.Start(bg); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { n.eng.Close() })
	return n
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func newBoard(t *testing.T, id string, mode podium.Mode, nkeys int) *podium.Board {
	t.Helper()
	b := &podium.Board{ID: id, Mode: mode, Public: true}
	for i := range nkeys {
		b.Keys = append(b.Keys, podium.KeyDef{Name: fmt.Sprintf("k%d", i+1), Order: podium.Desc})
	}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	return b
}

func submitOn(n *node, board, player string, keys ...int64) (engine.Result, error) {
	rs, err := n.eng.Submit(bg, []engine.Score{{Board: board, Player: player, Keys: keys}}, true, nil)
	if err != nil {
		return engine.Result{}, err
	}
	return rs[0], nil
}

// eventually waits up to within for cond.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func top(t *testing.T, n *node, board string) engine.Page {
	t.Helper()
	p, err := n.eng.Top(bg, engine.Query{Board: board}, 0, 1000)
	if err != nil {
		t.Fatalf("Top(%s): %v", board, err)
	}
	return p
}

func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEED=%q: %v", v, err)
		}
	}
	t.Logf("SEED=%d", s)
	return s
}

// Two nodes take sums for the same players of one board from many
// goroutines: no update is lost, no seq is used twice, and both nodes end
// with the same ranking, equal to the sums of what was acknowledged. A
// board made on one node shows on the other within a second.
func TestSharedTwoNodesSum(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a, b := c.start("a", nodeOpts{}), c.start("b", nodeOpts{})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "points", podium.Sum, 2)); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "the board made on a shows on b", func() bool {
		_, err := b.eng.Board("points")
		return err == nil
	})

	rng := mrand.New(mrand.NewPCG(seed(t), 0))
	const workers, each, players = 8, 40, 6
	type score struct {
		player string
		k      [2]int64
	}
	plan := make([][]score, workers)
	for w := range plan {
		for range each {
			plan[w] = append(plan[w], score{fmt.Sprintf("p%d", rng.IntN(players)), [2]int64{rng.Int64N(100), -rng.Int64N(5)}})
		}
	}
	var (
		mu   sync.Mutex
		sums = map[string][2]int64{}
		seqs []uint64
		wg   sync.WaitGroup
	)
	for w := range workers {
		n := a
		if w%2 == 1 {
			n = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range plan[w] {
				r, err := submitOn(n, "points", s.player, s.k[0], s.k[1])
				if err != nil {
					t.Errorf("submit: %v", err)
					return
				}
				mu.Lock()
				sum := sums[s.player]
				sums[s.player] = [2]int64{sum[0] + s.k[0], sum[1] + s.k[1]}
				seqs = append(seqs, r.Seq)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("seqs acknowledged: %v; want 1..%d, each once", seqs, workers*each)
		}
	}
	n := uint64(workers * each)
	for _, nd := range []*node{a, b} {
		eventually(t, 10*time.Second, "both nodes at the last seq", func() bool {
			bi, err := nd.eng.Board("points")
			return err == nil && bi.Seq == n
		})
	}
	pa, pb := top(t, a, "points"), top(t, b, "points")
	if !reflect.DeepEqual(pa.Entries, pb.Entries) {
		t.Fatalf("the nodes disagree:\n a %+v\n b %+v", pa.Entries, pb.Entries)
	}
	if len(pa.Entries) != len(sums) {
		t.Fatalf("%d entries, want %d players", len(pa.Entries), len(sums))
	}
	for _, e := range pa.Entries {
		if want := sums[e.Player]; e.Keys[0] != want[0] || e.Keys[1] != want[1] {
			t.Errorf("player %s: sum %v, want %v", e.Player, e.Keys, want)
		}
	}
}

// A node that starts while another keeps writing catches up and becomes
// ready: its start does not wait for a moment when nobody writes. The
// starting node reaches the database through a proxy that has the other
// node commit a score before it passes on each message of the starting
// node: a steady load, deterministic, under which every read of the heads
// finds one that moved since the log was read.
func TestSharedStartWhileOthersWrite(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "busy", podium.Sum, 1)); err != nil {
		t.Fatal(err)
	}
	var (
		writing atomic.Bool
		acked   atomic.Int64
	)
	far := *c
	far.dsn = beforeEachMessage(t, c.dsn, func() {
		if !writing.Load() {
			return
		}
		if _, err := submitOn(a, "busy", fmt.Sprintf("p%d", acked.Load()%50), 1); err != nil {
			t.Errorf("submit: %v", err)
			return
		}
		acked.Add(1)
	})
	b, cfg := far.open("b", nodeOpts{})
	b.eng = modules.Engine(cfg)
	t.Cleanup(func() { b.eng.Close() })
	writing.Store(true)
	started := make(chan error, 1)
	go func() { started <- b.eng.Start(bg) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		writing.Store(false)
		<-started
		t.Fatalf("Start did not return within 10s while another node wrote (%d writes)", acked.Load())
	}
	writing.Store(false)
	if acked.Load() == 0 {
		t.Fatal("nothing was written while b started")
	}
	eventually(t, 10*time.Second, "b catches up", func() bool {
		bi, err := b.eng.Board("busy")
		return err == nil && bi.Seq == uint64(acked.Load())
	})
	if pa, pb := top(t, a, "busy"), top(t, b, "busy"); !reflect.DeepEqual(pa.Entries, pb.Entries) {
		t.Fatalf("the nodes disagree after b started under load")
	}
}

// A board held past the lock timeout (by a node that paused holding it)
// fails the writes to it, and only those: the node's other writes go on.
func TestSharedHeldBoardFailsOnlyItsWrites(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	// No broker and no polling for the test's duration: nothing but a
	// write clears a failure the node records.
	a := c.start("a", nodeOpts{store: postgres.Options{LockTimeout: 300 * time.Millisecond}, noBroker: true, poll: time.Hour})
	for _, id := range []string{"held", "free"} {
		if _, _, err := a.eng.PutBoard(bg, newBoard(t, id, podium.Best, 1)); err != nil {
			t.Fatal(err)
		}
	}
	stuck, _ := c.open("stuck", nodeOpts{noBroker: true})
	tx, err := stuck.store.Begin(bg, []string{"held"})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = submitOn(a, "held", "p", 1)
	if code := podium.ErrorCode(err); code != podium.ECodeUnavailable {
		t.Fatalf("a write to a held board = %v, want %s", err, podium.ECodeUnavailable)
	}
	if _, err := submitOn(a, "free", "p", 1); err != nil {
		t.Fatalf("a write to another board after one timed out: %v", err)
	}
	if st := a.eng.Status(); st.Database != "" {
		t.Errorf("Status.Database = %q after a lock timeout; the database answered", st.Database)
	}
	tx.Rollback()
	if _, err := submitOn(a, "held", "p", 2); err != nil {
		t.Fatalf("a write to the board once released: %v", err)
	}
}

// A board whose keys change on one node (allowed while it has no
// entries) takes the new keys on another node at its next write, even
// before that node hears of the change: a write transaction sees the
// board's new generation and reloads it.
func TestSharedKeysChangedElsewhere(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{noBroker: true, poll: time.Hour})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "g", podium.Best, 2)); err != nil {
		t.Fatal(err)
	}
	b := c.start("b", nodeOpts{noBroker: true, poll: time.Hour}) // loads g with 2 keys
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "g", podium.Sum, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(b, "g", "p", 5, 6); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Errorf("a 2-key score on b, after g changed to 1 key = %v, want %s", err, podium.ECodeInvalid)
	}
	if _, err := submitOn(b, "g", "p", 5); err != nil {
		t.Fatalf("a 1-key score on b, after g changed to 1 key: %v", err)
	}
	r, err := submitOn(a, "g", "p", 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Entry.Keys[0] != 12 {
		t.Errorf("sum on a = %v, want 12: b's score counted under the new mode", r.Entry.Keys)
	}
}

// A node that missed changes pruned from the feed reloads every board,
// player and key: a key revoked and a board made meanwhile take effect.
func TestSharedPrunedFeedReloads(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{noBroker: true, poll: time.Hour})
	k, secret, err := a.eng.Keys().Create(bg, &podium.APIKey{Name: "k", Scopes: []string{podium.ScopeRead}, Boards: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	b, cfg := c.open("b", nodeOpts{poll: time.Hour}) // hears notices, and polls never
	var revoked revocations
	cfg.Listener = &revoked
	b.eng = modules.Engine(cfg)
	if err := b.eng.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.eng.Close() })
	if _, ok := b.eng.Keys().Authenticate(secret); !ok {
		t.Fatal("b does not know the key")
	}
	if err := a.eng.Keys().Delete(bg, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "new", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eng.PutPlayer(bg, &podium.Player{ID: "p", Name: "Pat", Hidden: true, Meta: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.PruneChanges(bg, 0); err != nil {
		t.Fatal(err)
	}
	// Wake b: it reads the feed and finds its position pruned.
	wake, _ := c.open("waker", nodeOpts{})
	eventually(t, 10*time.Second, "the waker's broker connects", func() bool { return wake.broker.Err() == nil })
	eventually(t, 10*time.Second, "b reloads", func() bool {
		wake.broker.Publish(bg, podium.Notice{Node: "waker", Change: 1})
		_, known := b.eng.Keys().Authenticate(secret)
		_, err := b.eng.Board("new")
		p, _ := b.eng.Player("p")
		return !known && err == nil && p.Hidden
	})
	if _, err := submitOn(b, "new", "q", 1); err != nil {
		t.Errorf("a write on b after it reloaded: %v", err)
	}
	if got := revoked.all(); !slices.Equal(got, []string{k.ID}) {
		t.Errorf("b reported revoked keys %v, want %s: the live streams it authorised must end", got, k.ID)
	}
}

// revocations is an engine.Listener that records revoked keys.
type revocations struct {
	mu  sync.Mutex
	ids []string
}

func (r *revocations) Applied(string, string, uint64, []uint32) {}
func (r *revocations) KeyRevoked(id string) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}
func (r *revocations) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids)
}

// beforeEachMessage returns dsn with its connections made through a proxy
// that calls hook before it passes on each chunk the client sends.
func beforeEachMessage(t *testing.T, dsn string, hook func()) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { io.Copy(c, s); c.Close() }()
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						hook()
						if _, werr := s.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	return pgtest.WithParam(t, pgtest.WithParam(t, dsn, "host", "127.0.0.1"), "port", port)
}
