package http_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// heldBoard holds every submission; its evidence is kept an hour
// unpublished and a day from promotion.
const heldBoard = `{"title":"hv","keys":[{"name":"points","order":"desc"}],"public":true,"player_submit":true,
	"review":{"hold":"all"},"evidence":{"ttl_seconds":3600,"retention_seconds":86400}}`

// putHeld uploads u to a held submission's evidence URL (the held
// answer's evidence_url, which carries review=).
func (s *server) putHeld(evidenceURL, key string, u upload) resp {
	s.t.Helper()
	q := url.Values{"content_sha256": {sha([]byte(u.plain))}, "compressed_sha256": {sha(u.body)}}
	return s.do("PUT", evidenceURL+"&"+q.Encode(), key, u.body, "Content-Type", "application/gzip")
}

const msFormat = "2006-01-02T15:04:05.000Z"

// TestHeldEvidence (issue 9, between §4 and §5): on SQLite and on two
// PostgreSQL nodes, a player's session uploads the evidence of its held
// submission through the held answer's evidence_url; the review queue
// shows it on the other node; approval moves it to the approved seq,
// promoted to the board's retention, readable by seq on both nodes; a
// rejected item's evidence keeps its TTL and is swept; uploads need the
// player's own session or a submit key, never reveal another player's
// item, and are 409 once the item is decided.
func TestHeldEvidence(t *testing.T) {
	evidenceBackends(t, nil, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		ctx := context.Background()
		a.mkBoard("hv", heldBoard)
		gk := knownKey(t, a, b, `{"name":"game","scopes":["sessions"]}`)
		rev := knownKey(t, a, b, `{"name":"mods","scopes":["review"],"boards":["hv"]}`)
		sub := knownKey(t, a, b, `{"name":"sub","scopes":["submit"]}`)
		alice, _ := a.issue("alice", "phone", gk)
		bob, _ := a.issue("bob", "phone", gk)
		sessionsEventually(t, "node b knows the sessions", func() bool {
			return b.do("GET", "/v1/boards/hv/entries/alice/history", alice, nil).status == 200 &&
				b.do("GET", "/v1/boards/hv/entries/bob/history", bob, nil).status == 200
		})

		// alice's score is held on node b; the answer says where to upload.
		held := b.must(202, b.do("POST", "/v1/boards/hv/scores", alice, `{"player":"alice","score":500}`)).json(t)
		id := held["id"].(string)
		evURL := "/v1/boards/hv/entries/alice/evidence?review=" + id
		if held["evidence_url"] != evURL {
			t.Fatalf("held answer %v, want evidence_url %s", held, evURL)
		}
		bobsID := b.must(202, b.do("POST", "/v1/boards/hv/scores", bob, `{"player":"bob","score":400}`)).json(t)["id"].(string)
		u := newUpload(t, events(4, "alice held"), 0)

		// Who may upload, and what is refused; nothing is stored.
		for _, c := range []struct {
			path, key string
			status    int
			code      string
		}{
			{evURL, "", 401, "unauthenticated"},
			{evURL, bob, 403, "forbidden"},                                                     // another player's session
			{"/v1/boards/hv/entries/bob/evidence?review=" + id, bob, 404, "not_found"},         // alice's item under bob
			{"/v1/boards/hv/entries/alice/evidence?review=" + bobsID, alice, 404, "not_found"}, // bob's item under alice
			{"/v1/boards/hv/entries/alice/evidence?review=rv_00000000000000ff", alice, 404, "not_found"},
			{"/v1/boards/hv/entries/alice/evidence?review=rv_xyz", alice, 400, "invalid_argument"},
			{evURL + "&seq=1", alice, 400, "invalid_argument"},
		} {
			if r := a.putHeld(c.path, c.key, u); r.status != c.status || r.errCode(t) != c.code {
				t.Fatalf("PUT %s with %q: %d %s, want %d %s", c.path, c.key, r.status, r.body, c.status, c.code)
			}
		}
		nothingStored(t, st, "alice", podium.PendingEvidenceSeq(id), u)

		// alice uploads on node a: stored under the item, with the TTL.
		now := a.clock.Now()
		up := a.must(201, a.putHeld(evURL, alice, u)).json(t)
		if up["seq"] != nil || up["review"] != id || up["events"] != 4.0 || up["promoted_at"] != nil ||
			up["expires_at"] != now.Add(time.Hour).Format(msFormat) || up["content_sha256"] != sha([]byte(u.plain)) {
			t.Fatalf("upload to a held item: %v", up)
		}
		if again := b.must(200, b.putHeld(evURL, sub, u)).json(t); again["reused"] != true || again["review"] != id {
			t.Fatalf("the same again: %v", again)
		}
		if r := b.putHeld(evURL, alice, newUpload(t, events(2, "other"), 0)); r.status != 409 {
			t.Fatalf("other content: %d %s", r.status, r.body)
		}

		// The queue shows it on the other node, with where to download it.
		for _, path := range []string{"/v1/review/" + id, "/v1/review?board=hv&player=alice"} {
			m := b.must(200, b.do("GET", path, rev, nil)).json(t)
			if items, ok := m["items"].([]any); ok {
				m = items[0].(map[string]any)
			}
			ev, _ := m["evidence"].(map[string]any)
			if ev == nil || ev["events"] != 4.0 || ev["bytes"] != float64(len(u.body)) || ev["review"] != id || ev["download"] != evURL ||
				ev["content_sha256"] != sha([]byte(u.plain)) || ev["compressed_sha256"] != sha(u.body) {
				t.Fatalf("GET %s: evidence %v", path, m["evidence"])
			}
		}
		// Who may download it: moderators and alice.
		for _, c := range []struct {
			key    string
			status int
		}{{"", 401}, {bob, 403}, {sub, 403}, {alice, 200}, {rev, 200}, {adminKey, 200}} {
			r := b.do("GET", evURL, c.key, nil)
			if r.status != c.status || (c.status == 200 && (!bytes.Equal(r.body, u.body) || r.header.Get("Cache-Control") != "private, no-store")) {
				t.Fatalf("download with %q: %d %s", c.key, r.status, r.header)
			}
		}
		if r := b.do("GET", "/v1/boards/hv/entries/bob/evidence?review="+id, bob, nil); r.status != 404 {
			t.Fatalf("bob reads alice's item under his name: %d %s", r.status, r.body)
		}

		// Approval on node a 30 minutes later: the evidence follows the
		// entry to its seq, promoted for a day from the approval.
		a.clock.Add(30 * time.Minute)
		approvedAt := a.clock.Now()
		ap := a.must(200, a.do("POST", "/v1/review/"+id+"/approve", rev, `{"reason":"replay checked"}`)).json(t)
		seq := uint64(ap["decision"].(map[string]any)["seq"].(float64))
		seqURL := fmt.Sprintf("/v1/boards/hv/entries/alice/evidence?seq=%d", seq)
		for _, n := range []*server{a, b} {
			sessionsEventually(t, "the approved entry on "+n.url, func() bool { return n.do("GET", seqURL, adminKey, nil).status == 200 })
			if r := n.must(200, n.do("GET", seqURL, alice, nil)); !bytes.Equal(r.body, u.body) {
				t.Fatalf("the approved seq's evidence differs")
			}
			ev, err := n.ev.Evidence(ctx, "hv", "alice", seq)
			if err != nil || ev == nil || !ev.PromotedAt.Equal(approvedAt) || !ev.ExpiresAt.Equal(approvedAt.Add(24*time.Hour)) {
				t.Fatalf("the approved seq's evidence: %+v %v", ev, err)
			}
		}
		if ev, err := st.Evidence(ctx, "hv", "alice", podium.PendingEvidenceSeq(id), now); err != nil || ev != nil {
			t.Fatalf("the evidence stayed under the item too: %+v %v", ev, err)
		}
		it := b.must(200, b.do("GET", "/v1/review/"+id, rev, nil)).json(t)
		if ev := it["evidence"].(map[string]any); ev["seq"] != float64(seq) || ev["download"] != seqURL || ev["promoted_at"] != approvedAt.Format(msFormat) {
			t.Fatalf("the approved item's evidence %v", ev)
		}
		b.must(200, b.do("GET", evURL, alice, nil)) // by the item still
		if r := b.putHeld(evURL, alice, u); r.status != 409 || r.errCode(t) != "conflict" {
			t.Fatalf("upload to an approved item: %d %s", r.status, r.body)
		}

		// bob's item is rejected: his evidence is kept to its TTL for the
		// record, never promoted, then swept.
		bu := newUpload(t, events(3, "bob held"), 0)
		bobURL := "/v1/boards/hv/entries/bob/evidence?review=" + bobsID
		a.must(201, a.putHeld(bobURL, bob, bu))
		b.must(200, b.do("POST", "/v1/review/"+bobsID+"/reject", rev, `{"reason":"spliced replay"}`))
		if ev := a.must(200, a.do("GET", "/v1/review/"+bobsID, rev, nil)).json(t)["evidence"].(map[string]any); ev["promoted_at"] != nil ||
			ev["review"] != bobsID || ev["expires_at"] != approvedAt.Add(time.Hour).Format(msFormat) {
			t.Fatalf("the rejected item's evidence %v", ev)
		}
		a.must(200, a.do("GET", bobURL, bob, nil))
		if r := a.putHeld(bobURL, bob, newUpload(t, events(1, "late"), 0)); r.status != 409 {
			t.Fatalf("upload to a rejected item: %d %s", r.status, r.body)
		}
		a.clock.Add(61 * time.Minute)
		if r := b.do("GET", bobURL, bob, nil); r.status != 404 {
			t.Fatalf("the rejected item's evidence after its TTL: %d", r.status)
		}
		if n, err := b.ev.SweepEvidence(ctx, 10); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if _, ok, _ := st.PlayerContent(ctx, "bob", sha([]byte(bu.plain))); ok {
			t.Fatal("the rejected item's content outlived its TTL")
		}
		a.must(200, a.do("GET", seqURL, alice, nil)) // the approved one is kept
	})
}

// TestHeldEvidenceRace: an upload on one node and the approval of its item
// on the other at once. Whichever wins, the evidence is never left behind:
// an acknowledged upload is at the approved seq, a refused one (409)
// stored nothing.
func TestHeldEvidenceRace(t *testing.T) {
	evidenceBackends(t, nil, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		ctx := context.Background()
		a.mkBoard("hv", heldBoard)
		sub := knownKey(t, a, b, `{"name":"sub","scopes":["submit"]}`)
		counts := map[int]int{}
		for i := range 8 {
			id := a.must(202, a.do("POST", "/v1/boards/hv/scores", sub, fmt.Sprintf(`{"player":"p%d","score":%d}`, i, i))).json(t)["id"].(string)
			u := newUpload(t, events(3, fmt.Sprint("race", i)), 0)
			up := make(chan resp, 1)
			go func() { up <- a.putHeld(fmt.Sprintf("/v1/boards/hv/entries/p%d/evidence?review=%s", i, id), sub, u) }()
			ap := b.must(200, b.do("POST", "/v1/review/"+id+"/approve", adminKey, nil)).json(t)
			r := <-up
			seq := uint64(ap["decision"].(map[string]any)["seq"].(float64))
			player := fmt.Sprintf("p%d", i)
			counts[r.status]++
			if left, err := st.Evidence(ctx, "hv", player, podium.PendingEvidenceSeq(id), a.clock.Now()); err != nil || left != nil {
				t.Fatalf("round %d (upload %d): evidence left under the approved item: %+v %v", i, r.status, left, err)
			}
			at, err := st.Evidence(ctx, "hv", player, seq, a.clock.Now())
			switch {
			case err != nil:
				t.Fatal(err)
			case r.status == 201 && (at == nil || at.PromotedAt.IsZero()):
				t.Fatalf("round %d: an acknowledged upload is not at the approved seq: %+v", i, at)
			case r.status == 409 && at != nil:
				t.Fatalf("round %d: a refused upload stored evidence", i)
			case r.status != 201 && r.status != 409:
				t.Fatalf("round %d: upload %d %s", i, r.status, r.body)
			}
		}
		t.Logf("uploads: %v (201 before the approval, 409 after)", counts)
	})
}
