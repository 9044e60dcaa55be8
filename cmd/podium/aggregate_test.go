package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
)

// Scenario tests of aggregate and best_k boards through the HTTP API: one
// server on SQLite, and two nodes on one PostgreSQL database (writes go to
// both nodes in turn; every read must agree on both).

func TestAggregateScenarioSQLite(t *testing.T) {
	_, url := startProcess(t, []string{"PODIUM_ADMIN_KEY=" + clusterKey},
		"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--sync", "normal")
	aggregateScenario(t, []string{url})
}

func TestAggregateScenarioPostgres(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	c := newCluster(t, 2, "")
	aggregateScenario(t, []string{c.nodes[0].url, c.nodes[1].url})
}

// aggAPI is a client of one or more nodes: writes go to each in turn.
type aggAPI struct {
	t    *testing.T
	urls []string
	next int
	key  string // the admin key (default clusterKey)
}

func (a *aggAPI) call(method, path, body string) (int, map[string]any) {
	a.t.Helper()
	url := a.urls[a.next%len(a.urls)]
	a.next++
	key := a.key
	if key == "" {
		key = clusterKey
	}
	return aggCallAs(a.t, url, key, method, path, body)
}

func aggCall(t *testing.T, url, method, path, body string) (int, map[string]any) {
	t.Helper()
	return aggCallAs(t, url, clusterKey, method, path, body)
}

func aggCallAs(t *testing.T, url, key, method, path, body string) (int, map[string]any) {
	t.Helper()
	status, b, _ := do(url, method, path, key, body)
	if status == 0 {
		t.Fatalf("%s %s: no answer", method, path)
	}
	var m map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON", method, path, status, b)
		}
	}
	return status, m
}

func (a *aggAPI) want(status int, method, path, body string) map[string]any {
	a.t.Helper()
	got, m := a.call(method, path, body)
	if got != status {
		a.t.Fatalf("%s %s %s: %d %v, want %d", method, path, body, got, m, status)
	}
	return m
}

func (a *aggAPI) submit(board, player string, keys ...int64) {
	a.t.Helper()
	k, _ := json.Marshal(keys)
	a.want(200, "POST", "/v1/boards/"+board+"/scores", fmt.Sprintf(`{"player":%q,"keys":%s}`, player, k))
}

// ranking waits until every node shows the same ranking of a board and
// returns it as "player:keys" strings.
func (a *aggAPI) ranking(board string, want ...string) {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := true
		var last []string
		for _, url := range a.urls {
			_, m := aggCall(a.t, url, "GET", "/v1/boards/"+board+"/entries?limit=100", "")
			last = nil
			es, _ := m["entries"].([]any)
			for _, e := range es {
				en := e.(map[string]any)
				last = append(last, fmt.Sprintf("%s:%v", en["player"], en["keys"]))
			}
			if fmt.Sprint(last) != fmt.Sprint(want) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("board %s ranks %v, want %v", board, last, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (a *aggAPI) errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func aggregateScenario(t *testing.T, urls []string) {
	a := &aggAPI{t: t, urls: urls}
	t.Run("ThreeLevelSum", func(t *testing.T) {
		a.t = t
		keys := `"keys":[{"name":"time_ms","order":"asc"},{"name":"bbbv","order":"desc"}]`
		for _, l := range []string{"beg", "int", "exp"} {
			a.want(201, "PUT", "/v1/boards/ms:"+l, `{`+keys+`,"mode":"best","public":true}`)
		}
		b := a.want(201, "PUT", "/v1/boards/ms:sum", `{`+keys+`,"public":true,"aggregate":{"kind":"sum_of_bests",
			"sources":[{"board":"ms:beg"},{"board":"ms:int"},{"board":"ms:exp"}],"require_all":true}}`)
		if b["mode"] != "aggregate" || b["aggregate"].(map[string]any)["require_all"] != true {
			t.Fatalf("aggregate board answered %v", b)
		}
		a.submit("ms:beg", "alice", 1200, 10)
		a.submit("ms:int", "alice", 9000, 50)
		a.ranking("ms:sum")
		a.submit("ms:exp", "alice", 30000, 100)
		a.ranking("ms:sum", "alice:[40200 160]")
		a.submit("ms:beg", "bob", 2200, 20)
		a.submit("ms:int", "bob", 8000, 40)
		a.submit("ms:exp", "bob", 30000, 100) // the same sum, later
		a.ranking("ms:sum", "alice:[40200 160]", "bob:[40200 160]")
		a.submit("ms:beg", "alice", 1300, 99) // worse: nothing moves
		a.submit("ms:beg", "bob", 2100, 20)
		a.ranking("ms:sum", "bob:[40100 160]", "alice:[40200 160]")

		if m := a.want(409, "POST", "/v1/boards/ms:sum/scores", `{"player":"carol","keys":[1,1]}`); a.errCode(m) != "conflict" {
			t.Errorf("submit to the aggregate: %v", m)
		}
		if m := a.want(409, "DELETE", "/v1/boards/ms:int", ""); !strings.Contains(fmt.Sprint(m), "source of aggregate") {
			t.Errorf("delete a source: %v", m)
		}
		for _, body := range []string{
			`{` + keys + `,"aggregate":{"kind":"sum_of_bests","sources":[{"board":"ms:nope"}]}}`,
			`{` + keys + `,"aggregate":{"kind":"sum_of_bests","sources":[{"board":"ms:beg","weight":2}]}}`,
			`{"keys":[{"name":"t","order":"asc"}],"aggregate":{"kind":"sum_of_bests","sources":[{"board":"ms:beg"}]}}`,
			`{` + keys + `,"aggregate":{"kind":"sum_of_bests","sources":[{"board":"ms:bad"}]}}`,
		} {
			if m := a.want(400, "PUT", "/v1/boards/ms:bad", body); a.errCode(m) != "invalid_argument" && a.errCode(m) != "invalid_json" {
				t.Errorf("PUT %s: %v", body, m)
			}
		}
		// An admin delete on a source takes bob out of the sum (require_all).
		a.want(204, "DELETE", "/v1/boards/ms:int/entries/bob", "")
		a.ranking("ms:sum", "alice:[40200 160]")
	})
	t.Run("BestKTournament", func(t *testing.T) {
		a.t = t
		keys := `"keys":[{"name":"time_ms","order":"asc"}]`
		for l, keep := range map[string]int{"beg": 4, "int": 3, "exp": 2} {
			b := a.want(201, "PUT", "/v1/boards/t:"+l, fmt.Sprintf(`{%s,"mode":"best_k","keep":%d,"public":true}`, keys, keep))
			if b["keep"] != float64(keep) {
				t.Fatalf("best_k board answered %v", b)
			}
		}
		// best 4 beginner + best 3 intermediate + best 2 expert, missing
		// ones filled with 10 s / 60 s / 240 s.
		a.want(201, "PUT", "/v1/boards/t:total", `{`+keys+`,"public":true,"aggregate":{"kind":"best_k_sum","sources":[
			{"board":"t:beg","k":4,"fill":[10000]},{"board":"t:int","k":3,"fill":[60000]},{"board":"t:exp","k":2,"fill":[240000]}]}}`)
		for _, ms := range []int64{5000, 4000, 7000, 3000, 6000, 9000} {
			a.submit("t:beg", "alice", ms)
		}
		a.submit("t:int", "alice", 50000)
		a.submit("t:exp", "alice", 200000)
		a.submit("t:exp", "alice", 100000)
		a.submit("t:beg", "bob", 1000)
		// alice: 3000+4000+5000+6000 + 50000+2*60000 + 100000+200000
		// bob: 1000+3*10000 + 3*60000 + 2*240000
		a.ranking("t:total", "alice:[488000]", "bob:[691000]")
		_, m := aggCall(t, urls[len(urls)-1], "GET", "/v1/boards/t:beg/entries/alice", "")
		rs, _ := m["results"].([]any)
		var kept []string
		for _, r := range rs {
			kept = append(kept, fmt.Sprint(r.(map[string]any)["keys"]))
		}
		if got := strings.Join(kept, " "); got != "[3000] [4000] [5000] [6000]" {
			t.Errorf("alice's kept results on t:beg: %s", got)
		}
		if m := a.want(400, "PUT", "/v1/boards/t:bad", `{`+keys+`,"aggregate":{"kind":"best_k_sum","sources":[{"board":"t:exp","k":3,"fill":[1]}]}}`); !strings.Contains(fmt.Sprint(m), "keeping at least k = 3") {
			t.Errorf("k above keep: %v", m)
		}
	})
	t.Run("Check", func(t *testing.T) {
		a.t = t
		for _, url := range urls {
			if _, m := aggCall(t, url, "POST", "/v1/admin/check", ""); m["ok"] != true {
				t.Errorf("check on %s: %v", url, m)
			}
		}
	})
}

// podium check (offline) reports an aggregate whose log disagrees with its
// sources, and podium rebuild repairs it.
func TestAggregateCheckRebuildCLI(t *testing.T) {
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &aggAPI{t: t, urls: []string{m.URL()}, key: "admin-secret"}
	key := `"keys":[{"name":"t","order":"asc"}]`
	a.want(201, "PUT", "/v1/boards/a", `{`+key+`}`)
	a.want(201, "PUT", "/v1/boards/b", `{`+key+`}`)
	a.want(201, "PUT", "/v1/boards/ab", `{`+key+`,"aggregate":{"kind":"sum_of_bests","sources":[{"board":"a"},{"board":"b"}]}}`)
	a.submit("a", "x", 10)
	a.submit("b", "x", 20)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Corrupt the aggregate's log: a row the sources do not explain.
	st, err := sqlite.Open(filepath.Join(dir, dbName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last, _ := st.LastSeq(context.Background(), "ab")
	err = st.Commit(context.Background(), &podium.Batch{Submissions: []podium.Submission{
		{Seq: last + 1, Board: "ab", Period: "all", Player: "x", Keys: []int64{7}, At: time.Now()}}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 1 || !strings.Contains(out, "board ab period all player x: want keys [30] (from its sources), got keys [7]") {
		t.Fatalf("check of a corrupted aggregate: exit %d\n%s", code, out)
	}
	if code, out, errs := runCLI(t, "rebuild", "--data", dir); code != 0 {
		t.Fatalf("rebuild: %d %s %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 0 || !strings.Contains(out, "check: ok") {
		t.Fatalf("check after rebuild: exit %d\n%s", code, out)
	}
}
