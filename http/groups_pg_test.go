package http_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/pgtest"
)

// TestGroupsTwoNodesPostgres runs the groups scenario with its writes
// split between two nodes on one PostgreSQL schema; every read waits until
// both nodes answer the same.
func TestGroupsTwoNodesPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	a := startContestNode(t, dsn, schema, clk, "a")
	b := startContestNode(t, dsn, schema, clk, "b")
	groupScenario(t, a, b, func(path string) (map[string]int64, []string) {
		body := eventually(t, a, b, path, adminKey, func(string) bool { return true })
		var page struct {
			Entries []struct {
				Player string  `json:"player"`
				Keys   []int64 `json:"keys"`
			} `json:"entries"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		var order []string
		for _, e := range page.Entries {
			out[e.Player] = e.Keys[0]
			order = append(order, e.Player)
		}
		return out, order
	})
}

// TestGroupsConcurrentJoinsTwoNodesPostgres: joins sent at once to two
// nodes never pass the caps: 24 players into a group of 5, and one player
// into 12 groups with a cap of 2 groups a player.
func TestGroupsConcurrentJoinsTwoNodesPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	a := startContestNode(t, dsn, schema, clk, "a")
	b := startContestNode(t, dsn, schema, clk, "b")
	setupGroups(t, a, 5, 2)
	nodes := []*server{a, b}
	run := func(n int, path func(i int) string) (ok, full int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := nodes[i%2].do("PUT", path(i), adminKey, nil)
				mu.Lock()
				defer mu.Unlock()
				switch r.status {
				case 201:
					ok++
				case 409:
					full++
				default:
					t.Errorf("join: %d %s", r.status, r.body)
				}
			}()
		}
		wg.Wait()
		return ok, full
	}
	if ok, full := run(24, func(i int) string { return fmt.Sprintf("/v1/groups/clans/red/members/p%02d", i) }); ok != 5 || full != 19 {
		t.Fatalf("24 joins into a group of 5: %d joined, %d refused", ok, full)
	}
	if ok, full := run(12, func(i int) string { return fmt.Sprintf("/v1/groups/clans/g%02d/members/solo", i) }); ok != 2 || full != 10 {
		t.Fatalf("one player into 12 groups, cap 2: %d joined, %d refused", ok, full)
	}
	for _, s := range nodes {
		m := s.must(200, s.do("GET", "/v1/groups/clans/red/members", adminKey, nil)).json(t)
		if m["total"] != 5.0 {
			t.Fatalf("members of red on a node: %v", m)
		}
	}
	eventually(t, a, b, "/v1/boards/clans/entries", adminKey, func(body string) bool { return true })
}
