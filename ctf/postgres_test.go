package ctf

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/postgres"
)

// TestTwoNodesPostgres runs two services on one PostgreSQL database, as
// two podium nodes: concurrent attempts through both never make a double
// solve or reuse a seq, and both end with the same standings. The nodes
// poll only once an hour, so what the other node committed reaches each
// one by a broker notice (or by catching up in its own writes).
func TestTwoNodesPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{"staff": true}}
	var nodes []*Service
	for i := range 2 {
		st, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		br, err := postgres.NewBroker(dsn, postgres.BrokerOptions{Env: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { br.Close() })
		s := New(Config{Store: st, Players: pl, Now: clk.now, Poll: time.Hour, Broker: br, Node: fmt.Sprintf("n%d", i)})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes = append(nodes, s)
	}
	a, b := nodes[0], nodes[1]
	setup(t, a)
	for i := range 3 {
		ch := contest.Challenge{Contest: "ctf", ID: fmt.Sprintf("c%d", i), Scoring: contest.Scoring{Function: contest.RCTF, Value: 500, Minimum: 100}}
		if _, _, err := a.PutChallenge(ctx, &ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Sync(ctx); err != nil { // a metadata change reaches b by polling (here: now)
		t.Fatal(err)
	}
	chals, _ := b.Challenges("ctf")
	if len(chals) != 5 {
		t.Fatalf("node b has %d challenges, want 5", len(chals))
	}

	// 8 workers, 4 per node, each trying every (team, challenge) pair:
	// every pair must be solved exactly once.
	teams := []string{"t0", "t1", "t2", "t3", "t4", "staff"}
	ids := []string{"web", "pwn", "c0", "c1", "c2"}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		solves    = map[string]int{}
		conflicts int
		errs      []error
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := nodes[w%2]
			for k := range len(teams) * len(ids) {
				i := (k + w*7) % (len(teams) * len(ids))
				team, ch := teams[i%len(teams)], ids[i/len(teams)]
				_, err := n.Attempt(ctx, "ctf", team, ch, true, "judge", "")
				mu.Lock()
				switch {
				case err == nil:
					solves[team+"/"+ch]++
				case podium.ErrorCode(err) == podium.ECodeConflict:
					conflicts++
				default:
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Fatal(err)
	}
	if len(solves) != len(teams)*len(ids) || conflicts != 7*len(teams)*len(ids) {
		t.Fatalf("%d pairs solved, %d conflicts", len(solves), conflicts)
	}
	for p, n := range solves {
		if n != 1 {
			t.Fatalf("%s solved %d times", p, n)
		}
	}
	// Both nodes converge on the same live standings (by notices).
	deadline := time.Now().Add(10 * time.Second)
	for {
		la, _ := a.Standings("ctf", Live)
		lb, _ := b.Standings("ctf", Live)
		if la.Standings.Seq == 30 && lines(la) == lines(lb) && la.Standings.Seq == lb.Standings.Seq {
			if lines(la) == "[]" || len(la.Standings.Teams) != 6 {
				t.Fatalf("standings %s", lines(la))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes did not converge: a at seq %d %s, b at seq %d %s", la.Standings.Seq, lines(la), lb.Standings.Seq, lines(lb))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One more solve on a reaches b, which writes nothing, by a notice.
	if _, err := a.Attempt(ctx, "ctf", "t9", "web", true, "judge", ""); err != nil {
		t.Fatal(err)
	}
	for {
		lb, _ := b.Standings("ctf", Live)
		if lb.Standings.Seq == 31 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node b did not learn of a's solve: at seq %d", lb.Standings.Seq)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, n := range nodes {
		if ps, err := n.Check(ctx); err != nil || len(ps) != 0 {
			t.Fatalf("Check = %v, %v", ps, err)
		}
	}
	// Snapshots taken by both nodes are stored once each.
	clk.set(t0.Add(3 * time.Hour))
	for _, n := range nodes {
		if err := n.TakeSnapshots(ctx); err != nil {
			t.Fatal(err)
		}
	}
	times, err := a.SnapshotTimes(ctx, "ctf")
	if err != nil || len(times) != 24 {
		t.Fatalf("%d snapshots, %v", len(times), err)
	}
	sa, _ := a.Snapshot(ctx, "ctf", t0.Add(2*time.Hour))
	sb, _ := b.Snapshot(ctx, "ctf", t0.Add(2*time.Hour))
	if sa.Seq != 31 || fmt.Sprint(sa.Standings) != fmt.Sprint(sb.Standings) {
		t.Fatalf("final snapshots differ: %+v / %+v", sa, sb)
	}
}
