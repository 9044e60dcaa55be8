package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/stream"
)

// startContestNode starts a node on PostgreSQL with contests: its engine,
// board hub, contest service (told of the other nodes by a LISTEN/NOTIFY
// broker only: it polls once an hour) and HTTP server.
func startContestNode(t *testing.T, dsn, schema string, clk *fakeClock, name string) *server {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	br, err := postgres.NewBroker(dsn, postgres.BrokerOptions{Env: schema})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log, Node: name, PollEvery: 50 * time.Millisecond,
		Modules: modules.With(modules.Config{Store: st, Logger: log,
			Contests: ctf.ModuleConfig{Broker: br, Node: name, PollEvery: time.Hour}})})
	eng.Keys().SetAdminSecret(adminKey)
	hub := stream.New(podiumhttp.StreamSource(eng), stream.Config{Logger: log})
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.ContestHub().Close()
		hub.Close()
		ts.Close()
		eng.Close()
		br.Close()
		st.Close()
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

// eventually waits until get on both nodes answers 200 with the same
// body, that body passing ok; it returns the body.
func eventually(t *testing.T, a, b *server, path, key string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ra, rb := a.do("GET", path, key, nil), b.do("GET", path, key, nil)
		if ra.status == 200 && rb.status == 200 && string(ra.body) == string(rb.body) && ok(string(ra.body)) {
			return string(ra.body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: node a %d %s; node b %d %s", path, ra.status, ra.body, rb.status, rb.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestContestTwoNodesPostgres: two nodes on one PostgreSQL schema, as a
// deployment behind a load balancer. Attempts go to both; a stream on
// node b sees node a's solves; after the freeze the public standings,
// first bloods and CTFtime export are the same frozen ones on both
// nodes, the live ones the same too; the reveal reaches b's stream.
func TestContestTwoNodesPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	a := startContestNode(t, dsn, schema, clk, "a")
	b := startContestNode(t, dsn, schema, clk, "b")
	judge := a.key(`{"name":"judge","scopes":["submit"],"boards":["ctf"]}`)

	a.must(201, a.do("PUT", "/v1/contests/ctf", adminKey, `{"title":"Finals","start":"2026-11-30T09:00:00Z",
		"end":"2026-11-30T12:00:00Z","freeze":"2026-11-30T11:00:00Z","first_blood":[10,5,0],"public":true}`))
	a.must(201, a.do("PUT", "/v1/contests/ctf/challenges/web", adminKey,
		`{"scoring":{"function":"ctfd_linear","value":500,"minimum":100,"decay":5}}`))
	b.must(201, b.do("PUT", "/v1/contests/ctf/challenges/pwn", adminKey, `{"scoring":{"value":300}}`))
	a.must(200, a.do("PUT", "/v1/players/alice", adminKey, `{"name":"Team Alice"}`))
	// b's stream below names alice as b's engine knows her: wait until it
	// has the rename (from the change feed), or the delta may still say
	// "alice" (it did under load, 2 runs in 7).
	eventually(t, a, b, "/v1/players/alice", adminKey, func(s string) bool { return contains(s, `"Team Alice"`) })
	// Both nodes know both challenges (by notices: they poll hourly).
	eventually(t, a, b, "/v1/contests/ctf/challenges", "", func(s string) bool { return len(s) > 0 && contains(s, `"id":"web"`, `"id":"pwn"`) })

	pub := b.openSSE("/v1/contests/ctf/stream", "")
	if ev := pub.next(5 * time.Second); ev.Type != "snapshot" || ev.Data["total"] != 0.0 {
		t.Fatalf("first event on b %+v", ev)
	}
	attempt := func(n *server, team, ch string, correct bool, code int) {
		t.Helper()
		n.must(code, n.do("POST", "/v1/contests/ctf/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":%v}`, team, ch, correct)))
	}
	attempt(a, "alice", "web", true, 200)
	ev := pub.next(5 * time.Second)
	if ev.Type != "delta" || ev.Data["seq"] != 1.0 || !contains(fmt.Sprint(ev.Data["changes"]), "Team Alice") {
		t.Fatalf("b's stream after a's solve: %+v", ev)
	}
	attempt(b, "bob", "web", true, 200)
	attempt(b, "alice", "web", true, 409) // solved on a: b catches up in its transaction
	attempt(a, "bob", "pwn", false, 200)
	attempt(a, "bob", "pwn", true, 200)
	attempt(b, "carol", "nope", true, 404)
	for seq := 0.0; seq < 3; {
		ev := pub.next(5 * time.Second)
		if ev.Type != "delta" {
			t.Fatalf("b's stream: %+v", ev)
		}
		seq = ev.Data["seq"].(float64)
	}

	clk.Add(75 * time.Minute) // 11:15, frozen
	live := b.openSSE("/v1/contests/ctf/stream?view=live", "", adminKey)
	if ev := live.next(5 * time.Second); ev.Type != "snapshot" || ev.Data["seq"] != 3.0 {
		t.Fatalf("live stream on b: %+v", ev)
	}
	attempt(a, "carol", "web", true, 200)
	attempt(b, "alice", "pwn", true, 200)
	for seq := 4.0; seq <= 5; {
		ev := live.next(5 * time.Second)
		if ev.Type != "delta" {
			t.Fatalf("live stream on b in the freeze: %+v", ev)
		}
		seq = ev.Data["seq"].(float64) + 1
	}

	// Public, frozen at 3 solves; live, 5; the same on both nodes.
	frozen := eventually(t, a, b, "/v1/contests/ctf/standings?view=public", "", func(s string) bool { return contains(s, `"frozen":true`, `"seq":3`) })
	eventually(t, a, b, "/v1/contests/ctf/standings", adminKey, func(s string) bool { return contains(s, `"view":"live"`, `"seq":5`, `"carol"`) })
	if contains(frozen, "carol") {
		t.Fatalf("the frozen standings show a solve after the freeze: %s", frozen)
	}
	ct := eventually(t, a, b, "/v1/contests/ctf/ctftime", "", func(s string) bool { return contains(s, `"team":"Team Alice"`) })
	if contains(ct, "carol") || !contains(ct, `"tasks":["pwn","web"]`) {
		t.Fatalf("CTFtime export in the freeze %s", ct)
	}
	eventually(t, a, b, "/v1/contests/ctf/first-bloods", "", func(s string) bool { return contains(s, `"team":"alice"`, `"team":"bob"`) })
	log := eventually(t, a, b, "/v1/contests/ctf/attempts", adminKey, func(string) bool { return true })
	for _, want := range []string{`"result":"duplicate"`, `"result":"unknown_challenge"`, `"result":"wrong"`} {
		if !contains(log, want) {
			t.Fatalf("audit log without %s: %s", want, log)
		}
	}
	select {
	case ev := <-pub.events:
		t.Fatalf("b's public stream moved in the freeze: %+v", ev)
	case <-time.After(300 * time.Millisecond):
	}

	// The reveal, on a, reaches b's public stream.
	clk.Add(time.Hour)
	a.must(200, a.do("POST", "/v1/contests/ctf/unfreeze", adminKey, nil))
	ev = pub.next(5 * time.Second)
	if ev.Type != "delta" || ev.Data["seq"] != 5.0 {
		t.Fatalf("b's stream after the reveal on a: %+v", ev)
	}
	eventually(t, a, b, "/v1/contests/ctf/standings?view=public", "", func(s string) bool { return contains(s, `"frozen":false`, `"seq":5`) })
	for _, n := range []*server{a, b} {
		r := n.must(200, n.do("POST", "/v1/admin/check", adminKey, nil))
		if !contains(string(r.body), `"contest_differences":[]`) {
			t.Fatalf("check: %s", r.body)
		}
	}

	// Deleted on b: gone from a, and a's streams end.
	astream := a.openSSE("/v1/contests/ctf/stream", "")
	astream.next(5 * time.Second)
	b.must(204, b.do("DELETE", "/v1/contests/ctf", adminKey, nil))
	evs, ended := astream.rest(5 * time.Second)
	if !ended || len(evs) != 1 || evs[0].Data["code"] != "board_not_found" {
		t.Fatalf("a's stream after the delete on b: %+v (ended %v)", evs, ended)
	}
	a.must(404, a.do("GET", "/v1/contests/ctf", "", nil))
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
