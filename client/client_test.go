package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// must returns v, or panics with err: the test fails with the stack of
// the call (a Go call of a function returning (T, error) cannot pass t too).
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func score(v int64) *int64 { return &v }

// ranking renders a page as "rank:player:keys ...".
func ranking(es []client.Entry) string {
	s := ""
	for _, e := range es {
		s += fmt.Sprintf("%d:%s:%v ", e.Rank, e.Player, e.Keys)
	}
	return s
}

// TestBoardsScoresAndReads covers the board, score, entry, player and
// key endpoints, and the typed errors.
func TestBoardsScoresAndReads(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey), client.WithUserAgent("client-test"))

	b, created, err := admin.PutBoard(ctx, "ms:expert", client.BoardSpec{Title: "Expert",
		Keys:   []client.RankKey{{Name: "time_ms", Order: "asc", Label: "Time", Format: "duration_ms"}, {Name: "bbbv", Order: "desc"}},
		Public: client.Bool(true)})
	if err != nil || !created || b.ID != "ms:expert" || len(b.Keys) != 2 || b.Keys[0].Format != "duration_ms" || b.Period != "all" || !b.Public {
		t.Fatalf("PutBoard: %+v created %v err %v", b, created, err)
	}
	if b2, created2, err := admin.PutBoard(ctx, "ms:expert", client.BoardSpec{Title: "Expert 2"}); err != nil || created2 || b2.Title != "Expert 2" || len(b2.Keys) != 2 {
		t.Fatalf("PutBoard update: %+v %v %v", b2, created2, err)
	}
	if _, _, err := admin.PutBoard(ctx, "ms:sum", client.BoardSpec{Keys: []client.RankKey{{Name: "pts", Order: "desc"}}, Mode: "sum"}); err != nil {
		t.Fatal(err)
	}
	if got := must(admin.GetBoard(ctx, "ms:expert")); got.Title != "Expert 2" {
		t.Fatalf("GetBoard: %+v", got)
	}
	if bs := must(admin.ListBoards(ctx)); len(bs) != 2 {
		t.Fatalf("ListBoards as admin: %d boards", len(bs))
	}
	anon := client.New(srv.URL)
	if bs := must(anon.ListBoards(ctx)); len(bs) != 1 || bs[0].ID != "ms:expert" {
		t.Fatalf("ListBoards anonymous: %+v", bs)
	}

	// A key of its own for the game server.
	k := must(admin.CreateKey(ctx, client.APIKeySpec{Name: "game", Scopes: []string{"submit", "read"}, Boards: []string{"ms:"}}))
	if k.Key == "" || k.ID == "" {
		t.Fatalf("CreateKey: %+v", k)
	}
	game := client.New(srv.URL, client.WithKey(k.Key))

	res := must(game.Submit(ctx, "ms:expert", client.Score{Player: "alice", Keys: []int64{41234, 150}, Meta: json.RawMessage(`{"v":1}`)}))
	if !res.Improved || res.Entry.Rank != 1 || res.Previous != nil || res.Seq == 0 || res.Replayed || string(res.Entry.Meta) != `{"v":1}` {
		t.Fatalf("Submit: %+v", res)
	}
	res = must(game.Submit(ctx, "ms:expert", client.Score{Player: "alice", Keys: []int64{40000, 150}}))
	if !res.Improved || res.Previous == nil || res.Previous.Keys[0] != 41234 {
		t.Fatalf("Submit improvement: %+v", res)
	}
	batch := must(game.SubmitBatch(ctx, []client.Score{
		{Board: "ms:expert", Player: "bob", Keys: []int64{39000, 90}},
		{Board: "ms:expert", Player: "carol", Keys: []int64{45000, 200}},
		{Board: "ms:expert", Player: "dave", Keys: []int64{1}}, // wrong key count
		{Board: "ms:sum", Player: "bob", Score: score(5)},
	}))
	if len(batch) != 4 || batch[0].Error != nil || batch[0].Entry.Rank != 1 || batch[2].Error == nil || batch[2].Error.Code != "invalid_argument" ||
		batch[3].Error != nil || batch[3].Entry.Keys[0] != 5 {
		t.Fatalf("SubmitBatch: %+v", batch)
	}

	top := must(anon.Top(ctx, "ms:expert", 0, 10, client.ReadOptions{}))
	if got, want := ranking(top.Entries), "1:bob:[39000 90] 2:alice:[40000 150] 3:carol:[45000 200] "; got != want || top.Total != 3 || top.Seq == 0 {
		t.Fatalf("Top: %q total %d, want %q", got, top.Total, want)
	}
	if p := must(anon.Top(ctx, "ms:expert", 1, 1, client.ReadOptions{Period: "current"})); ranking(p.Entries) != "2:alice:[40000 150] " {
		t.Fatalf("Top offset 1: %s", ranking(p.Entries))
	}
	if p := must(anon.Players(ctx, "ms:expert", []string{"carol", "nobody", "bob"}, client.ReadOptions{})); ranking(p.Entries) != "1:bob:[39000 90] 3:carol:[45000 200] " {
		t.Fatalf("Players: %s", ranking(p.Entries))
	}
	if e := must(anon.Entry(ctx, "ms:expert", "alice", client.ReadOptions{})); e.Entry.Rank != 2 || e.Entry.Player != "alice" || e.Total != 3 {
		t.Fatalf("Entry: %+v", e)
	}
	if p := must(anon.Around(ctx, "ms:expert", "carol", 1, client.ReadOptions{})); ranking(p.Entries) != "2:alice:[40000 150] 3:carol:[45000 200] " {
		t.Fatalf("Around: %s", ranking(p.Entries))
	}
	if ps := must(anon.Periods(ctx, "ms:expert")); ps.Current != "all" || len(ps.Periods) != 1 || ps.Periods[0].Entries != 3 {
		t.Fatalf("Periods: %+v", ps)
	}

	// Players: name and hide.
	if p := must(admin.PutPlayer(ctx, "bob", client.PlayerSpec{Name: "Bob B.", Hidden: true})); p.Name != "Bob B." || !p.Hidden {
		t.Fatalf("PutPlayer: %+v", p)
	}
	if p := must(game.GetPlayer(ctx, "bob")); p.Name != "Bob B." || !p.Hidden {
		t.Fatalf("GetPlayer: %+v", p)
	}
	if p := must(anon.Top(ctx, "ms:expert", 0, 10, client.ReadOptions{})); ranking(p.Entries) != "1:alice:[40000 150] 2:carol:[45000 200] " {
		t.Fatalf("hidden bob still ranked: %s", ranking(p.Entries))
	}
	if p := must(admin.Top(ctx, "ms:expert", 0, 10, client.ReadOptions{IncludeHidden: true})); len(p.Entries) != 3 || !p.Entries[0].Hidden || p.Entries[0].Name != "Bob B." {
		t.Fatalf("IncludeHidden: %+v", p.Entries)
	}

	// Typed errors.
	_, err = anon.Entry(ctx, "ms:expert", "nobody", client.ReadOptions{})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 404 || ce.Code != "entry_not_found" || !client.IsNotFound(err) ||
		!errors.Is(err, client.ErrEntryNotFound) || errors.Is(err, client.ErrBoardNotFound) {
		t.Fatalf("missing entry: %v", err)
	}
	if _, err := anon.GetBoard(ctx, "nope"); !errors.Is(err, client.ErrBoardNotFound) || !client.IsNotFound(err) {
		t.Fatalf("missing board: %v", err)
	}
	if _, _, err := game.PutBoard(ctx, "ms:x", client.BoardSpec{Keys: []client.RankKey{{Name: "a", Order: "asc"}}}); !errors.Is(err, client.ErrForbidden) || client.StatusOf(err) != 403 {
		t.Fatalf("PutBoard with a submit key: %v", err)
	}
	if _, err := client.New(srv.URL, client.WithKey("wrong")).ListBoards(ctx); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("bad key: %v", err)
	}
	if _, _, err := admin.PutBoard(ctx, "ms:expert", client.BoardSpec{Mode: "latest"}); !client.IsConflict(err) || client.CodeOf(err) != "conflict" {
		t.Fatalf("mode change with entries: %v", err)
	}

	// Deletes, keys, admin.
	if err := admin.DeleteEntry(ctx, "ms:expert", "carol", ""); err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteEntry(ctx, "ms:expert", "carol", "current"); !client.IsNotFound(err) {
		t.Fatalf("second DeleteEntry: %v", err)
	}
	keys := must(admin.ListKeys(ctx))
	if len(keys) != 1 || keys[0].ID != k.ID || keys[0].Key != "" {
		t.Fatalf("ListKeys: %+v", keys)
	}
	rep := must(admin.Check(ctx))
	if !rep.OK || len(rep.Differences) != 0 {
		t.Fatalf("Check: %+v", rep)
	}
	if r := must(admin.Reload(ctx)); !r.OK {
		t.Fatalf("Reload: %+v", r)
	}
	if err := admin.DeleteKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := game.Submit(ctx, "ms:expert", client.Score{Player: "eve", Keys: []int64{1, 1}}); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("revoked key: %v", err)
	}
	if err := admin.DeleteBoard(ctx, "ms:sum"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.GetBoard(ctx, "ms:sum"); !client.IsNotFound(err) {
		t.Fatalf("deleted board: %v", err)
	}

	// Feed: alice's personal bests and new leaders.
	f := must(anon.Feed(ctx, "ms:expert", 10))
	if f.Board == nil || *f.Board != "ms:expert" || len(f.Events) == 0 || f.Events[0].Board != "ms:expert" {
		t.Fatalf("Feed: %+v", f)
	}
	all := must(anon.Feed(ctx, "", 0))
	if all.Board != nil || len(all.Events) != len(f.Events) {
		t.Fatalf("Feed of every board: %+v", all)
	}
}

// TestSessions issues, lists, refreshes and revokes player sessions.
func TestSessions(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	if _, _, err := admin.PutBoard(ctx, "daily", client.BoardSpec{Keys: []client.RankKey{{Name: "pts", Order: "desc"}}, Public: client.Bool(true), PlayerSubmit: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	s := must(admin.IssueSession(ctx, "alice", client.SessionSpec{Device: "phone", TTLSeconds: 3600}))
	if s.Token == "" || s.Player != "alice" || s.Device != "phone" || s.ExpiresAt.Sub(s.CreatedAt) != time.Hour {
		t.Fatalf("IssueSession: %+v", s)
	}
	// The same Idempotency-Key again: 409 naming the session issued.
	_, err := admin.IssueSession(ctx, "alice", client.SessionSpec{Device: "tablet"}, client.WriteOptions{IdempotencyKey: "login-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.IssueSession(ctx, "alice", client.SessionSpec{Device: "tablet"}, client.WriteOptions{IdempotencyKey: "login-1"}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("repeated Idempotency-Key: %v", err)
	}
	player := admin.WithKey(s.Token)
	if r := must(player.Submit(ctx, "daily", client.Score{Player: "alice", Score: score(10)})); r.Entry.Rank != 1 {
		t.Fatalf("session submit: %+v", r)
	}
	if _, err := player.Submit(ctx, "daily", client.Score{Player: "bob", Score: score(10)}); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("session submitting as another player: %v", err)
	}
	// Two sessions issued in the same millisecond list in either order.
	list := must(player.ListSessions(ctx, "alice"))
	if len(list) == 2 && list[1].ID == s.ID {
		list[0], list[1] = list[1], list[0]
	}
	if len(list) != 2 || list[0].ID != s.ID || list[0].Token != "" || list[1].Token != "" {
		t.Fatalf("ListSessions: %+v", list)
	}
	r := must(player.RefreshSession(ctx, "alice", s.ID))
	if r.Token == "" || r.Token == s.Token || r.ID != s.ID {
		t.Fatalf("RefreshSession: %+v", r)
	}
	if _, err := player.ListSessions(ctx, "alice"); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("old token after a refresh: %v", err)
	}
	player = player.WithKey(r.Token)
	if err := player.RevokeSession(ctx, "alice", list[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := player.RevokeSession(ctx, "alice", list[1].ID); !client.IsNotFound(err) {
		t.Fatalf("revoking twice: %v", err)
	}
	if n := must(admin.RevokeSessions(ctx, "alice")); n != 1 {
		t.Fatalf("RevokeSessions: %d", n)
	}
	if _, err := player.ListSessions(ctx, "alice"); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("revoked token: %v", err)
	}
}

// TestTournaments joins, settles and reads a tournament's payouts.
func TestTournaments(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	now := time.Now().UTC()
	if _, _, err := admin.PutBoard(ctx, "pts:total", client.BoardSpec{Keys: []client.RankKey{{Name: "points", Order: "desc"}}, Mode: "sum",
		Public: client.Bool(true), Points: &client.Points{Ladder: "pts", Kind: "total"}}); err != nil {
		t.Fatal(err)
	}
	b, _, err := admin.PutBoard(ctx, "weekly:1", client.BoardSpec{Keys: []client.RankKey{{Name: "time_ms", Order: "asc"}}, Public: client.Bool(true),
		Tournament: &client.Tournament{Start: now.Add(-time.Hour), End: now.Add(time.Hour), JoinRequired: true, MaxParticipants: 10, Weight: 100, Ladder: "pts"}})
	if err != nil || b.Tournament == nil || !b.Tournament.JoinRequired {
		t.Fatalf("PutBoard tournament: %+v %v", b, err)
	}
	if _, err := admin.Submit(ctx, "weekly:1", client.Score{Player: "amy", Score: score(1000)}); client.CodeOf(err) != "not_joined" {
		t.Fatalf("score before joining: %v", err)
	}
	for _, p := range []string{"amy", "bob"} {
		if j := must(admin.Join(ctx, "weekly:1", p)); !j.Joined || j.Already {
			t.Fatalf("Join: %+v", j)
		}
	}
	if j := must(admin.Join(ctx, "weekly:1", "amy")); !j.Already || j.Participants != 2 {
		t.Fatalf("Join again: %+v", j)
	}
	must(admin.Submit(ctx, "weekly:1", client.Score{Player: "amy", Score: score(1000)}))
	must(admin.Submit(ctx, "weekly:1", client.Score{Player: "bob", Score: score(2000)}))
	ts := must(admin.ListTournaments(ctx))
	if len(ts) != 1 || ts[0].Board != "weekly:1" || ts[0].Tournament.Weight != 100 {
		t.Fatalf("ListTournaments: %+v", ts)
	}
	ti := must(admin.GetTournament(ctx, "weekly:1"))
	if ti.State != "open" || ti.Participants != 2 || ti.Entries != 2 || ti.Settlement != nil {
		t.Fatalf("GetTournament: %+v", ti)
	}
	ps := must(admin.TournamentParticipants(ctx, "weekly:1", 0, 10))
	if ps.Total != 2 || ps.Participants[0].Player != "amy" || ps.Participants[1].N != 2 {
		t.Fatalf("TournamentParticipants: %+v", ps)
	}
	run := must(admin.Settle(ctx, "weekly:1"))
	if run.Run != 1 || run.Players != 2 || run.Paid != 150 {
		t.Fatalf("Settle: %+v", run)
	}
	po := must(admin.TournamentPayouts(ctx, "weekly:1", 0, 10))
	if po.Total != 2 || po.Payouts[0].Player != "amy" || *po.Payouts[0].Rank != 1 || po.Payouts[0].Points != 100 || po.Payouts[1].Points != 50 {
		t.Fatalf("TournamentPayouts: %+v", po)
	}
	if p := must(admin.Top(ctx, "pts:total", 0, 10, client.ReadOptions{})); ranking(p.Entries) != "1:amy:[100] 2:bob:[50] " {
		t.Fatalf("points board: %s", ranking(p.Entries))
	}
	if _, err := admin.GetTournament(ctx, "pts:total"); client.CodeOf(err) != "not_found" {
		t.Fatalf("GetTournament of a plain board: %v", err)
	}
}

// TestContests runs a small contest through every contest endpoint.
func TestContests(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	now := time.Now().UTC().Truncate(time.Millisecond)
	freeze := now.Add(time.Hour)
	ct, created, err := admin.PutContest(ctx, "ctf:q", client.ContestSpec{Title: "Quals", Start: now.Add(-time.Hour), End: now.Add(2 * time.Hour),
		Freeze: &freeze, FirstBlood: []int64{10, 5, 3}, Public: true})
	if err != nil || !created || ct.State != "running" || ct.FirstBlood != [3]int64{10, 5, 3} {
		t.Fatalf("PutContest: %+v %v %v", ct, created, err)
	}
	for i, id := range []string{"web", "pwn", "misc"} {
		ch, created, err := admin.PutChallenge(ctx, "ctf:q", id, client.ChallengeSpec{Name: "Ch " + id, Order: int64(i), Scoring: client.Scoring{Value: 100 * int64(i+1)}})
		if err != nil || !created || ch.ID != id || ch.Scoring.Value != 100*int64(i+1) {
			t.Fatalf("PutChallenge: %+v %v %v", ch, created, err)
		}
	}
	if err := admin.DeleteChallenge(ctx, "ctf:q", "misc"); err != nil {
		t.Fatal(err)
	}
	judge := client.New(srv.URL, client.WithKey(must(admin.CreateKey(ctx, client.APIKeySpec{Name: "judge", Scopes: []string{"submit"}, Boards: []string{"ctf:"}})).Key))
	a := must(judge.Attempt(ctx, "ctf:q", "alice", "web", true))
	if a.Attempt.Result != "solved" || a.Standing == nil || a.Standing.Score != 110 || a.Replayed {
		t.Fatalf("Attempt: %+v", a)
	}
	// Values are retroactive: a scoring change on a solved challenge needs
	// a confirmation; a rename does not, and keeps the scoring.
	if _, _, err := admin.PutChallenge(ctx, "ctf:q", "web", client.ChallengeSpec{Scoring: client.Scoring{Value: 200}}); client.CodeOf(err) != "conflict" {
		t.Fatalf("unconfirmed scoring change: %v", err)
	}
	for _, v := range []int64{200, 100} {
		if ch, _, err := admin.PutChallenge(ctx, "ctf:q", "web", client.ChallengeSpec{Scoring: client.Scoring{Value: v}}, client.ChallengeOptions{Confirm: true}); err != nil || ch.Scoring.Value != v {
			t.Fatalf("confirmed scoring change: %+v %v", ch, err)
		}
	}
	if ch, _, err := admin.PutChallenge(ctx, "ctf:q", "web", client.ChallengeSpec{Name: "Web", Scoring: client.Scoring{Value: 100}}); err != nil || ch.Name != "Web" || ch.Scoring.Value != 100 {
		t.Fatalf("rename: %+v %v", ch, err)
	}
	a = must(judge.Attempt(ctx, "ctf:q", "bob", "pwn", false, client.WriteOptions{IdempotencyKey: "v-1"}))
	if a.Attempt.Result != "wrong" || a.Standing != nil {
		t.Fatalf("wrong Attempt: %+v", a)
	}
	if a2 := must(judge.Attempt(ctx, "ctf:q", "bob", "pwn", false, client.WriteOptions{IdempotencyKey: "v-1"})); !a2.Replayed || a2.Attempt.ID != a.Attempt.ID {
		t.Fatalf("replayed Attempt: %+v", a2)
	}
	must(judge.Attempt(ctx, "ctf:q", "bob", "pwn", true))
	if _, err := judge.Attempt(ctx, "ctf:q", "alice", "web", true); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("duplicate solve: %v", err)
	}
	if cs := must(admin.ListContests(ctx)); len(cs) != 1 || cs[0].ID != "ctf:q" {
		t.Fatalf("ListContests: %+v", cs)
	}
	if c := must(admin.GetContest(ctx, "ctf:q")); c.Freeze == nil || !c.Freeze.Equal(freeze) {
		t.Fatalf("GetContest: %+v", c)
	}
	chs := must(admin.Challenges(ctx, "ctf:q", client.ViewLive))
	if len(chs) != 2 || chs[0].ID != "web" || chs[0].Solves != 1 || len(chs[0].FirstBloods) != 1 || chs[0].FirstBloods[0].Team != "alice" {
		t.Fatalf("Challenges: %+v", chs)
	}
	log := must(admin.Attempts(ctx, "ctf:q", 0, 100))
	if len(log.Attempts) != 4 || log.Attempts[3].Result != "duplicate" || log.NextAfter != log.Attempts[3].ID {
		t.Fatalf("Attempts: %+v", log)
	}
	st := must(admin.Standings(ctx, "ctf:q", client.StandingsOptions{View: client.ViewLive, Limit: 10}))
	if st.View != "live" || st.Total != 2 || st.Standings[0].Team != "bob" || st.Standings[0].Score != 220 || *st.Standings[1].Rank != 2 {
		t.Fatalf("Standings: %+v", st)
	}
	tm := must(admin.Team(ctx, "ctf:q", "alice", client.ViewDefault))
	if tm.Standing.Score != 110 || len(tm.Standing.Solves) != 1 || tm.Standing.Solves[0].FirstBlood != 1 || tm.Standing.Solves[0].Bonus != 10 {
		t.Fatalf("Team: %+v", tm)
	}
	fb := must(admin.FirstBloods(ctx, "ctf:q", client.ViewPublic))
	if len(fb) != 2 || fb[0].Position != 1 {
		t.Fatalf("FirstBloods: %+v", fb)
	}
	if _, err := admin.Snapshots(ctx, "ctf:q"); err != nil {
		t.Fatal(err)
	}
	ch := must(admin.Chart(ctx, "ctf:q", client.ViewLive, 5))
	if len(ch.Series) != 2 || len(ch.Series[0].Points) == 0 || ch.Series[0].Points[len(ch.Series[0].Points)-1].Score != 220 {
		t.Fatalf("Chart: %+v", ch)
	}
	ctft := must(admin.CTFtimeFeed(ctx, "ctf:q", client.ViewLive))
	if len(ctft.Tasks) != 2 || len(ctft.Standings) != 2 || ctft.Standings[0].Score != 220 || ctft.Standings[0].TaskStats["Ch pwn"].Points != 220 {
		t.Fatalf("CTFtimeFeed: %+v", ctft)
	}
	// The live standings over SSE: a snapshot, then a delta for a new solve.
	wctx, cancel := context.WithCancel(ctx)
	var views []string
	var statuses []string
	err = client.New(srv.URL).WatchContest(wctx, "ctf:q", client.WatchOptions{Limit: 10,
		OnStatus: func(s client.Status) { statuses = append(statuses, s.State) }},
		func(s client.State, u client.Update) {
			views = append(views, u.Type+" "+ranking(s.Entries))
			if len(views) == 1 {
				must(judge.Attempt(ctx, "ctf:q", "carol", "web", true))
			} else {
				cancel()
			}
		})
	if err != nil || len(views) != 2 ||
		views[0] != "snapshot 1:bob:[220] 2:alice:[110] " || !strings.HasPrefix(views[1], "delta 1:bob:[220] 2:alice:[110] 3:carol:") {
		t.Fatalf("WatchContest: %v %q", err, views)
	}
	if strings.Join(statuses, ",") != "connecting,live" {
		t.Fatalf("WatchContest statuses: %q", statuses)
	}
	if _, err := admin.Unfreeze(ctx, "ctf:q"); client.CodeOf(err) != "conflict" {
		t.Fatalf("Unfreeze before the end: %v", err)
	}
	if c := must(admin.Unfreeze(ctx, "ctf:q", client.UnfreezeOptions{Force: true})); !c.Revealed {
		t.Fatalf("Unfreeze: %+v", c)
	}
	if c := must(admin.Refreeze(ctx, "ctf:q")); c.Revealed {
		t.Fatalf("Refreeze: %+v", c)
	}
	if err := admin.DeleteContest(ctx, "ctf:q"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.GetContest(ctx, "ctf:q"); !client.IsNotFound(err) {
		t.Fatalf("deleted contest: %v", err)
	}
}
