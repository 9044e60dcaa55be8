package http_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// Groups and group boards (issue 21, part 2) end to end through the API.

// groupEntries returns a board's entries as player -> first key, and the
// players in rank order.
func groupEntries(t *testing.T, s *server, path string) (map[string]int64, []string) {
	t.Helper()
	r := s.do("GET", path, adminKey, nil)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var page struct {
		Entries []struct {
			Player string  `json:"player"`
			Keys   []int64 `json:"keys"`
			Rank   int     `json:"rank"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	var order []string
	for _, e := range page.Entries {
		out[e.Player] = e.Keys[0]
		order = append(order, e.Player)
	}
	return out, order
}

// setupGroups makes, on s, a set "clans" (caps members, perPlayer), a
// source "pts" and three group boards over them: sum of the best 2, avg
// of the best 2, best member.
func setupGroups(t *testing.T, s *server, members, perPlayer int) {
	t.Helper()
	put := func(id, body string) {
		t.Helper()
		if r := s.do("PUT", "/v1/boards/"+id, adminKey, body); r.status != 200 && r.status != 201 {
			t.Fatalf("PUT %s: %d %s", id, r.status, r.body)
		}
	}
	put("clans", fmt.Sprintf(`{"keys":[{"name":"members","order":"desc"}],"group_set":{"max_members":%d,"max_per_player":%d,"max_groups":10}}`, members, perPlayer))
	put("pts", `{"keys":[{"name":"points","order":"desc"}]}`)
	put("clan-sum", `{"keys":[{"name":"points","order":"desc"}],"group_board":{"set":"clans","source":"pts","rule":"sum","k":2}}`)
	put("clan-avg", `{"keys":[{"name":"points","order":"desc"}],"group_board":{"set":"clans","source":"pts","rule":"avg","k":2}}`)
	put("clan-best", `{"keys":[{"name":"points","order":"desc"}],"group_board":{"set":"clans","source":"pts","rule":"best"}}`)
}

func join(s *server, grp, player string) resp {
	return s.do("PUT", "/v1/groups/clans/"+grp+"/members/"+player, adminKey, nil)
}

func leave(s *server, grp, player string) resp {
	return s.do("DELETE", "/v1/groups/clans/"+grp+"/members/"+player, adminKey, nil)
}

func score(s *server, player string, v int64) resp {
	return s.do("POST", "/v1/boards/pts/scores", adminKey, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, player, v))
}

// groupScenario runs the scenario with writes on a and b in turn (the
// same server, or two nodes) and reads on read, which waits until both
// agree (wait).
func groupScenario(t *testing.T, a, b *server, wait func(path string) (map[string]int64, []string)) {
	setupGroups(t, a, 3, 2)
	must := func(want int, r resp) resp {
		t.Helper()
		if r.status != want {
			t.Fatalf("want %d, got %d %s", want, r.status, r.body)
		}
		return r
	}
	if bd := must(200, a.do("GET", "/v1/boards/clan-avg", adminKey, nil)).json(t); fmt.Sprint(bd["group_board"]) != "map[k:2 rule:avg set:clans source:pts]" || bd["mode"] != "latest" {
		t.Fatalf("a group board as GET shows it: %v", bd)
	}
	if bd := must(200, b.do("GET", "/v1/boards/clans", adminKey, nil)).json(t); fmt.Sprint(bd["group_set"]) != "map[max_groups:10 max_members:3 max_per_player:2]" {
		t.Fatalf("a group set as GET shows it: %v", bd)
	}
	must(201, join(a, "red", "ann"))
	must(200, join(b, "red", "ann")) // already a member
	must(201, join(b, "red", "bob"))
	must(201, join(a, "blue", "cat"))
	must(200, score(a, "ann", 10))
	must(200, score(b, "bob", 30))
	must(200, score(a, "cat", 25))
	must(200, score(b, "dan", 100)) // in no group
	got, order := wait("/v1/boards/clan-sum/entries")
	if got["red"] != 40 || got["blue"] != 25 || len(got) != 2 || order[0] != "red" {
		t.Fatalf("sum: %v %v", got, order)
	}
	if got, _ := wait("/v1/boards/clan-avg/entries"); got["red"] != 20 || got["blue"] != 25 {
		t.Fatalf("avg: %v", got)
	}
	if got, _ := wait("/v1/boards/clan-best/entries"); got["red"] != 30 || got["blue"] != 25 {
		t.Fatalf("best: %v", got)
	}
	// A join moves the group at once: dan (100) into blue.
	must(201, join(b, "blue", "dan"))
	if got, order := wait("/v1/boards/clan-sum/entries"); got["blue"] != 125 || order[0] != "blue" {
		t.Fatalf("sum after a join: %v %v", got, order)
	}
	// Best 2 of three: a third member below both counts in no sum.
	must(201, join(a, "red", "eve"))
	must(200, score(a, "eve", 5))
	if got, _ := wait("/v1/boards/clan-sum/entries"); got["red"] != 40 {
		t.Fatalf("sum of the best 2: %v", got)
	}
	// Caps: red is full (3); dan may be in 2 groups, not 3.
	if r := join(b, "red", "fay"); r.status != 409 || r.errCode(t) != "conflict" {
		t.Fatalf("join of a full group: %d %s", r.status, r.body)
	}
	must(201, join(a, "green", "dan"))
	if r := join(a, "pink", "dan"); r.status != 409 {
		t.Fatalf("a third group for dan: %d %s", r.status, r.body)
	}
	// A leave moves the group at once; the last member's leave removes it.
	must(200, leave(b, "red", "bob"))
	if got, _ := wait("/v1/boards/clan-sum/entries"); got["red"] != 15 {
		t.Fatalf("sum after a leave: %v", got)
	}
	must(200, leave(a, "green", "dan"))
	if got, _ := wait("/v1/boards/clans/entries"); got["red"] != 2 || got["blue"] != 2 || len(got) != 2 {
		t.Fatalf("set entries (members per group): %v", got)
	}
	if r := leave(a, "green", "dan"); r.status != 404 {
		t.Fatalf("leave of a non-member: %d %s", r.status, r.body)
	}
	// A score moves every group of the player.
	must(200, score(b, "dan", 200))
	if got, _ := wait("/v1/boards/clan-best/entries"); got["blue"] != 200 {
		t.Fatalf("best after a score: %v", got)
	}
	// The members view of a board: the members' entries, global ranks.
	r := must(200, a.do("GET", "/v1/boards/pts/entries?group=clans/blue", adminKey, nil))
	var page struct {
		Entries []struct {
			Player string `json:"player"`
			Rank   int    `json:"rank"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	var view []string
	for _, e := range page.Entries {
		view = append(view, fmt.Sprintf("%s:%d", e.Player, e.Rank))
	}
	if !slices.Equal(view, []string{"dan:1", "cat:3"}) {
		t.Fatalf("members view: %v (%s)", view, r.body)
	}
	m := must(200, b.do("GET", "/v1/groups/clans/blue/members?limit=1", adminKey, nil)).json(t)
	if m["total"] != 2.0 || len(m["members"].([]any)) != 1 || m["members"].([]any)[0].(map[string]any)["player"] != "cat" {
		t.Fatalf("members: %v", m)
	}
	pg := must(200, a.do("GET", "/v1/players/dan/groups?set=clans", adminKey, nil)).json(t)
	if fmt.Sprint(pg["groups"]) != "[blue]" {
		t.Fatalf("groups of dan: %v", pg)
	}
	// Bad input: 4xx, nothing changed.
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"PUT", "/v1/groups/clans/Bad%20Id/members/x", 400},
		{"PUT", "/v1/groups/pts/red/members/x", 404},
		{"PUT", "/v1/groups/nope/red/members/x", 404},
		{"GET", "/v1/boards/pts/entries?group=clans", 400},
		{"GET", "/v1/boards/pts/entries?group=clans/blue&players=a", 400},
		{"POST", "/v1/boards/clan-sum/scores", 409},
	} {
		var body any
		if c.method == "POST" {
			body = `{"player":"x","keys":[1]}`
		}
		if r := a.do(c.method, c.path, adminKey, body); r.status != c.want {
			t.Errorf("%s %s: want %d, got %d %s", c.method, c.path, c.want, r.status, r.body)
		}
	}
	if r := a.do("DELETE", "/v1/boards/pts", adminKey, nil); r.status != 409 {
		t.Fatalf("delete of a source: %d %s", r.status, r.body)
	}
	// The check agrees with the group boards.
	if r := must(200, a.do("POST", "/v1/admin/check", adminKey, nil)); !checkClean(r.body) {
		t.Fatalf("check: %s", r.body)
	}
}

// checkClean reports whether a check's answer reports no differences.
func checkClean(body []byte) bool {
	var c struct {
		OK bool `json:"ok"`
	}
	return json.Unmarshal(body, &c) == nil && c.OK
}

func TestGroupsSQLite(t *testing.T) {
	s := newServer(t)
	groupScenario(t, s, s, func(path string) (map[string]int64, []string) { return groupEntries(t, s, path) })
}
