package http_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/pgtest"
)

// TestGroupsModel: random scores, joins and leaves through the API; after
// each step the group boards equal a recomputation from the members'
// entries (a model of the memberships and the source's best scores), the
// set's entries are the groups' sizes, every refusal is the model's, and
// the check finds nothing. SEED= replays a run.
func TestGroupsModel(t *testing.T) {
	s := newServer(t)
	groupsModel(t, []*server{s}, 300, func(path string) map[string]int64 {
		got, _ := groupEntries(t, s, path)
		return got
	})
}

// TestGroupsModelTwoNodesPostgres is TestGroupsModel with the writes sent
// to two nodes in turn; each comparison waits until both nodes agree.
func TestGroupsModelTwoNodesPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	a := startContestNode(t, dsn, schema, clk, "a")
	b := startContestNode(t, dsn, schema, clk, "b")
	groupsModel(t, []*server{a, b}, 120, func(path string) map[string]int64 {
		eventually(t, a, b, path, adminKey, func(string) bool { return true })
		got, _ := groupEntries(t, a, path)
		return got
	})
}

// groupsModel runs steps random operations, each on the next of nodes,
// and compares the boards read with read against the model.
func groupsModel(t *testing.T, nodes []*server, steps int, read func(path string) map[string]int64) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	const maxMembers, perPlayer = 3, 2
	setupGroups(t, nodes[0], maxMembers, perPlayer)
	best := map[string]int64{}             // player -> best score on pts
	groups := map[string]map[string]bool{} // group -> members
	mine := map[string]int{}               // player -> groups
	if testing.Short() {
		steps /= 3
	}
	for step := range steps {
		s := nodes[step%len(nodes)]
		p := fmt.Sprintf("p%d", rng.IntN(10))
		g := fmt.Sprintf("g%d", rng.IntN(5))
		switch op := rng.IntN(10); {
		case op < 5:
			v := rng.Int64N(1000)
			if r := score(s, p, v); r.status != 200 {
				t.Fatalf("step %d: score: %d %s", step, r.status, r.body)
			}
			if cur, ok := best[p]; !ok || v > cur {
				best[p] = v
			}
		case op < 8:
			want := 201
			switch {
			case groups[g][p]:
				want = 200
			case len(groups[g]) >= maxMembers, mine[p] >= perPlayer:
				want = 409
			}
			if r := join(s, g, p); r.status != want {
				t.Fatalf("step %d: join %s %s: want %d, got %d %s", step, g, p, want, r.status, r.body)
			}
			if want == 201 {
				if groups[g] == nil {
					groups[g] = map[string]bool{}
				}
				groups[g][p] = true
				mine[p]++
			}
		default:
			want := 404
			if groups[g][p] {
				want = 200
			}
			if r := leave(s, g, p); r.status != want {
				t.Fatalf("step %d: leave %s %s: want %d, got %d %s", step, g, p, want, r.status, r.body)
			}
			if want == 200 {
				delete(groups[g], p)
				if len(groups[g]) == 0 {
					delete(groups, g)
				}
				mine[p]--
			}
		}
		if step%10 != 9 && step != steps-1 {
			continue
		}
		wantSum, wantAvg, wantBest, wantSize := map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
		for g, ms := range groups {
			wantSize[g] = int64(len(ms))
			var vs []int64
			for p := range ms {
				if v, ok := best[p]; ok {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				continue
			}
			slices.Sort(vs)
			slices.Reverse(vs)
			top := vs[:min(2, len(vs))]
			var sum int64
			for _, v := range top {
				sum += v
			}
			wantSum[g], wantAvg[g], wantBest[g] = sum, sum/int64(len(top)), vs[0]
		}
		for path, want := range map[string]map[string]int64{
			"/v1/boards/clan-sum/entries": wantSum, "/v1/boards/clan-avg/entries": wantAvg,
			"/v1/boards/clan-best/entries": wantBest, "/v1/boards/clans/entries": wantSize,
		} {
			if got := read(path); !maps.Equal(got, want) {
				t.Fatalf("step %d: %s: got %v, want %v (SEED=%d)", step, path, got, want, seed)
			}
		}
	}
	for _, s := range nodes {
		if r := s.do("POST", "/v1/admin/check", adminKey, nil); r.status != 200 || !checkClean(r.body) {
			t.Fatalf("check: %d %s", r.status, r.body)
		}
	}
}
