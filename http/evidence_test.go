package http_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/evidence"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// evNode starts a node on st whose server takes opts (body timeouts,
// budgets); shared is the rate limit store the nodes share (nil: each
// node its own).
func evNode(t *testing.T, st podium.Store, clk *fakeClock, name string, shared ratelimit.Store, opts func(*podiumhttp.Config)) *server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mods := modules.With(modules.Config{Store: st, Logger: log, Evidence: evidence.Config{SweepEvery: -1}})
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log, Node: name, PollEvery: 50 * time.Millisecond,
		Modules: mods})
	eng.Keys().SetAdminSecret(adminKey)
	hub := stream.New(podiumhttp.StreamSource(eng), stream.Config{Logger: log})
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub,
		RateLimits: &podiumhttp.RateLimits{Limiter: ratelimit.New(ratelimit.Config{Shared: shared, Now: clk.Now, Logger: log})}}
	if opts != nil {
		opts(&cfg)
	}
	srv := podiumhttp.New(cfg)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hub.Close()
		ts.Close()
		eng.Close()
	})
	ev, _ := moduleOf[*evidence.Module](mods)
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv, ev: ev}
}

// moduleOf returns the module of type M among mods.
func moduleOf[M engine.Module](mods []engine.Module) (M, bool) {
	for _, m := range mods {
		if x, ok := m.(M); ok {
			return x, true
		}
	}
	var zero M
	return zero, false
}

// evidenceBackends runs fn on one SQLite node (a and b the same) and on
// two PostgreSQL nodes sharing their byte budgets through the database.
func evidenceBackends(t *testing.T, opts func(*podiumhttp.Config), fn func(t *testing.T, a, b *server, st podium.EvidenceStore)) {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		a := evNode(t, st, &fakeClock{t: start}, "a", nil, opts)
		fn(t, a, a, st)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, _ := pgtest.Schema(t)
		clk := &fakeClock{t: start}
		var nodes []*server
		var first *postgres.Store
		for _, name := range []string{"a", "b"} {
			st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if first == nil {
				first = st
			}
			nodes = append(nodes, evNode(t, st, clk, name, st.RateLimits(), opts))
		}
		fn(t, nodes[0], nodes[1], first)
	})
}

func gzipOf(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// events returns n JSON Lines whose content does not compress much.
func events(n int, tag string) string { return wideEvents(n, 1, tag) }

// wideEvents returns n lines of w hashes each (w 3: about 200 bytes a line).
func wideEvents(n, w int, tag string) string {
	var sb strings.Builder
	h := sha256.Sum256([]byte(tag))
	for i := range n {
		fmt.Fprintf(&sb, "{\"i\":%d", i)
		for j := range w {
			h = sha256.Sum256(h[:])
			fmt.Fprintf(&sb, ",\"r%d\":%q", j, hex.EncodeToString(h[:]))
		}
		sb.WriteString("}\n")
	}
	return sb.String()
}

type upload struct {
	plain   string // JSON Lines (content_sha256 is over them unless content is set)
	body    []byte // the gzip body
	content string // declared hashes ("" computed)
	comp    string
	seq     uint64
	hdr     []string
}

func newUpload(t *testing.T, plain string, seq uint64) upload {
	return upload{plain: plain, body: gzipOf(t, plain), seq: seq}
}

func (u upload) path(board, player string) string {
	content, comp := u.content, u.comp
	if content == "" {
		content = sha([]byte(u.plain))
	}
	if comp == "" {
		comp = sha(u.body)
	}
	q := url.Values{"content_sha256": {content}, "compressed_sha256": {comp}}
	if u.seq != 0 {
		q.Set("seq", fmt.Sprint(u.seq))
	}
	return "/v1/boards/" + board + "/entries/" + player + "/evidence?" + q.Encode()
}

func (s *server) putEvidence(board, player, key string, u upload) resp {
	s.t.Helper()
	return s.do("PUT", u.path(board, player), key, u.body, append([]string{"Content-Type", "application/gzip"}, u.hdr...)...)
}

func (s *server) evScore(board, key, player string, n int) uint64 {
	s.t.Helper()
	m := s.must(200, s.do("POST", "/v1/boards/"+board+"/scores", key, fmt.Sprintf(`{"player":%q,"score":%d}`, player, n))).json(s.t)
	return uint64(m["seq"].(float64))
}

// raw sends a request by hand (a lying or too large Content-Length) and
// returns the status line.
func (s *server) raw(head string, body []byte) string {
	s.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, head)
	c.Write(body)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		s.t.Fatalf("no answer: %v", err)
	}
	return strings.TrimSpace(line)
}

const evBoard = `{"title":"ev","keys":[{"name":"points","order":"desc"}],"public":true,"player_submit":true,
	"evidence":{"max_bytes":4096,"max_inflated_bytes":65536,"max_events":50,"max_line_bytes":256,"ttl_seconds":3600}}`

// nothingStored checks that no content of player is stored under any of
// the uploads' hashes, and that the submission has no evidence.
func nothingStored(t *testing.T, st podium.EvidenceStore, player string, seq uint64, ups ...upload) {
	t.Helper()
	for _, u := range ups {
		for _, h := range []string{sha([]byte(u.plain)), u.content} {
			if h == "" {
				continue
			}
			if _, ok, err := st.PlayerContent(context.Background(), player, h); err != nil || ok {
				t.Fatalf("content %s of %s stored after a refusal (%v)", h, player, err)
			}
		}
	}
	if ev, err := st.Evidence(context.Background(), "ev", player, seq, time.Now().Add(-time.Hour)); err != nil || ev != nil {
		t.Fatalf("evidence of seq %d stored after refusals: %+v %v", seq, ev, err)
	}
}

// TestEvidenceLimits (issue 9 §4): every limit gets its status and
// nothing is stored, on SQLite and on two PostgreSQL nodes.
func TestEvidenceLimits(t *testing.T) {
	evidenceBackends(t, nil, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		a.mkBoard("ev", evBoard)
		seq := a.evScore("ev", adminKey, "alice", 10)
		bobSeq := a.evScore("ev", adminKey, "bob", 10)
		sessionsEventually(t, "node b sees the scores", func() bool {
			return b.do("GET", "/v1/boards/ev/entries/bob", "", nil).status == 200
		})
		ok := newUpload(t, events(3, "ok"), seq)

		// 9 MiB of zeros in 60 KB lines: about 9 KB sent, for a board with
		// the default limits.
		a.mkBoard("dflt", `{"title":"dflt","keys":[{"name":"points","order":"desc"}]}`)
		dseq := a.evScore("dflt", adminKey, "alice", 1)
		bomb := newUpload(t, strings.Repeat("{\"a\":\""+strings.Repeat("0", 60000)+"\"}\n", 158), dseq)
		concat := newUpload(t, "{}\n", seq)
		concat.body = append(gzipOf(t, "{}\n"), gzipOf(t, "{\"x\":1}\n")...)
		trailing := newUpload(t, "{}\n", seq)
		trailing.body = append(gzipOf(t, "{}\n"), "garbage"...)
		many := newUpload(t, strings.Repeat("{}\n", 51), seq)
		long := newUpload(t, "{\"a\":\""+strings.Repeat("x", 300)+"\"}\n", seq)
		notJSON := newUpload(t, "{\"a\":1}\nnot json\n", seq)
		big := newUpload(t, wideEvents(45, 3, "big"), seq) // > 4096 compressed
		contentMismatch := ok
		contentMismatch.content = sha([]byte("something else"))
		compMismatch := ok
		compMismatch.comp = sha([]byte("something else"))
		encoded := ok
		encoded.hdr = []string{"Content-Encoding", "gzip"}
		typed := ok
		typed.hdr = []string{"Content-Type", "text/plain"}
		notHis := ok
		notHis.seq = bobSeq
		if r := a.putEvidence("dflt", "alice", adminKey, bomb); r.status != 422 || !strings.Contains(string(r.body), "inflates to more than 8388608") || len(bomb.body) > 16<<10 {
			t.Fatalf("bomb of %d bytes: %d %s", len(bomb.body), r.status, r.body)
		}
		if ev, _ := st.Evidence(context.Background(), "dflt", "alice", dseq, time.Now().Add(-time.Hour)); ev != nil {
			t.Fatal("the bomb was stored")
		}
		refused := []upload{bomb, concat, trailing, many, long, notJSON, big, contentMismatch, compMismatch, encoded, typed}
		for i, c := range []struct {
			name   string
			u      upload
			status int
			code   string
		}{
			{"concatenated", concat, 422, "unprocessable"},
			{"trailing", trailing, 422, "unprocessable"},
			{"too many events", many, 422, "unprocessable"},
			{"line too long", long, 422, "unprocessable"},
			{"not JSON", notJSON, 422, "unprocessable"},
			{"too large", big, 413, "too_large"},
			{"content hash", contentMismatch, 422, "unprocessable"},
			{"compressed hash", compMismatch, 422, "unprocessable"},
			{"Content-Encoding", encoded, 422, "unprocessable"},
			{"Content-Type", typed, 415, "unsupported_media_type"},
			{"another player's seq", notHis, 404, "entry_not_found"},
		} {
			n := []*server{a, b}[i%2] // alternate the nodes
			r := n.putEvidence("ev", "alice", adminKey, c.u)
			if r.status != c.status || r.errCode(t) != c.code {
				t.Fatalf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
			}
		}
		// A body without a length, past the limit, is counted and cut.
		chunked := big
		req, _ := http.NewRequest("PUT", b.url+chunked.path("ev", "alice"), io.MultiReader(bytes.NewReader(chunked.body)))
		req.Header.Set("Authorization", "Bearer "+adminKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 413 || req.ContentLength != 0 {
			t.Fatalf("chunked too large: %d (length %d)", res.StatusCode, req.ContentLength)
		}
		// A declared length past the limit: 413 before any body is sent.
		if line := a.raw("PUT "+ok.path("ev", "alice")+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+adminKey+
			"\r\nContent-Length: 5000000\r\n\r\n", nil); !strings.Contains(line, " 413 ") {
			t.Fatalf("declared too large: %s", line)
		}
		// A length that says less than is sent: only that much is read,
		// which is not the whole gzip member.
		if line := b.raw("PUT "+ok.path("ev", "alice")+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+adminKey+
			fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", len(ok.body)-10), ok.body); !strings.Contains(line, " 422 ") {
			t.Fatalf("lying length: %s", line)
		}
		nothingStored(t, st, "alice", seq, append(refused, ok)...)
		if r := b.do("GET", "/v1/boards/ev/entries/alice/evidence", adminKey, nil); r.status != 404 {
			t.Fatalf("evidence after refusals: %d", r.status)
		}
		// The refusals are counted by reason.
		m := a.do("GET", "/metrics", "", nil)
		m.body = append(m.body, b.do("GET", "/metrics", "", nil).body...)
		for _, want := range []string{`podium_evidence_uploads_total{reason="inflated_too_large",result="refused"}`,
			`podium_evidence_uploads_total{reason="hash_mismatch",result="refused"}`, `podium_evidence_received_bytes_total{result="refused"}`} {
			if !bytes.Contains(m.body, []byte(want)) {
				t.Fatalf("metrics lack %s", want)
			}
		}
		// And then a good upload goes through.
		a.must(201, a.putEvidence("ev", "alice", adminKey, ok))
	})
}

// TestEvidenceUploads: stored once, reused, 409 for other content,
// permissions on upload and download, never another player's content.
func TestEvidenceUploads(t *testing.T) {
	evidenceBackends(t, nil, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		a.mkBoard("ev", evBoard)
		a.mkBoard("pub", `{"title":"pub","keys":[{"name":"points","order":"desc"}],"public":true,"player_submit":true,"evidence":{"public":true}}`)
		gk := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"game","scopes":["sessions"]}`)).json(t)["key"].(string)
		sub := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"sub","scopes":["submit"]}`)).json(t)["key"].(string)
		rd := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"rd","scopes":["read"]}`)).json(t)["key"].(string)
		alice, _ := a.issue("alice", "phone", gk)
		bob, _ := a.issue("bob", "phone", gk)
		s1 := a.evScore("ev", alice, "alice", 10)
		s2 := a.evScore("ev", alice, "alice", 20)
		bs := a.evScore("ev", bob, "bob", 5)
		ps := a.evScore("pub", alice, "alice", 1)
		sessionsEventually(t, "node b knows the sessions and scores", func() bool {
			return b.do("GET", "/v1/boards/ev/entries/alice/evidence?seq="+fmt.Sprint(s1), alice, nil).status == 404 &&
				b.do("GET", "/v1/boards/pub/entries/alice", "", nil).status == 200
		})
		u := newUpload(t, events(5, "alice"), s1)

		// Who may upload.
		for _, c := range []struct {
			key    string
			status int
		}{{"", 401}, {bob, 403}, {rd, 403}} {
			if r := b.putEvidence("ev", "alice", c.key, u); r.status != c.status {
				t.Fatalf("upload with %q: %d %s", c.key, r.status, r.body)
			}
		}
		first := b.must(201, b.putEvidence("ev", "alice", alice, u)).json(t)
		if first["reused"] != false || first["seq"] != float64(s1) || first["events"] != float64(5) || first["content_sha256"] != sha([]byte(u.plain)) {
			t.Fatalf("first upload: %v", first)
		}
		// The same again: 200, reused, the same record.
		again := a.must(200, a.putEvidence("ev", "alice", sub, u)).json(t)
		if again["reused"] != true || again["created_at"] != first["created_at"] {
			t.Fatalf("again: %v", again)
		}
		// Other content for the same submission: 409, nothing changes.
		other := newUpload(t, events(2, "other"), s1)
		if r := a.putEvidence("ev", "alice", alice, other); r.status != 409 || r.errCode(t) != "conflict" {
			t.Fatalf("other content: %d %s", r.status, r.body)
		}
		// The same content on another submission: stored once, reused,
		// without the body (an empty one is not read).
		reuse := u
		reuse.seq, reuse.body = s2, nil
		reuse.comp = sha(u.body)
		r2 := b.must(201, b.putEvidence("ev", "alice", alice, reuse)).json(t)
		if r2["reused"] != true || r2["seq"] != float64(s2) || r2["compressed_sha256"] != sha(u.body) {
			t.Fatalf("reuse: %v", r2)
		}
		// Without seq: the player's entry (s2, the better score).
		if m := a.must(200, a.putEvidence("ev", "alice", alice, upload{plain: u.plain, body: u.body})).json(t); m["seq"] != float64(s2) {
			t.Fatalf("no seq: %v", m)
		}
		// bob declaring alice's hashes gets nothing of hers: his body is
		// read and checked like any other.
		steal := u
		steal.seq, steal.body = bs, gzipOf(t, "{}\n")
		if r := a.putEvidence("ev", "bob", bob, steal); r.status != 422 {
			t.Fatalf("bob with alice's hashes: %d %s", r.status, r.body)
		}
		if _, ok, _ := st.PlayerContent(context.Background(), "bob", sha([]byte(u.plain))); ok {
			t.Fatal("bob got alice's content")
		}

		// Who may download.
		for _, c := range []struct {
			key    string
			status int
		}{{"", 401}, {bob, 403}, {rd, 403}, {sub, 403}, {alice, 200}, {adminKey, 200}} {
			r := b.do("GET", fmt.Sprintf("/v1/boards/ev/entries/alice/evidence?seq=%d", s1), c.key, nil)
			if r.status != c.status {
				t.Fatalf("download with %q: %d %s", c.key, r.status, r.body)
			}
			if c.status == 200 && (!bytes.Equal(r.body, u.body) || r.header.Get("Content-Type") != "application/gzip" ||
				r.header.Get("Podium-Content-SHA256") != sha([]byte(u.plain))) {
				t.Fatalf("downloaded %d bytes, %v", len(r.body), r.header)
			}
		}
		if r := a.do("GET", "/v1/boards/ev/entries/alice/evidence?seq=99", adminKey, nil); r.status != 404 {
			t.Fatalf("no such seq: %d", r.status)
		}
		// A board with public evidence: anyone who may read it.
		pu := newUpload(t, events(2, "pub"), ps)
		a.must(201, a.putEvidence("pub", "alice", alice, pu))
		if r := b.do("GET", "/v1/boards/pub/entries/alice/evidence", "", nil); r.status != 200 || !bytes.Equal(r.body, pu.body) {
			t.Fatalf("public evidence: %d", r.status)
		}
		// Not for a hidden player, but still for their admins.
		a.must(200, a.do("PUT", "/v1/players/alice", adminKey, `{"name":"Alice","hidden":true}`))
		sessionsEventually(t, "node b hides alice", func() bool {
			return b.do("GET", "/v1/boards/pub/entries/alice/evidence", "", nil).status == 404
		})
		b.must(200, b.do("GET", "/v1/boards/pub/entries/alice/evidence", adminKey, nil))
		// The board setting reads back.
		if m := a.must(200, a.do("GET", "/v1/boards/pub", "", nil)).json(t); fmt.Sprint(m["evidence"]) != "map[public:true]" {
			t.Fatalf("board evidence setting: %v", m["evidence"])
		}
		if r := a.do("PUT", "/v1/boards/pub", adminKey, `{"evidence":{"max_bytes":99999999}}`); r.status != 400 {
			t.Fatalf("max_bytes out of bounds: %d", r.status)
		}
	})
}

// TestEvidenceBudgets: the byte budget spent on node a refuses on node b
// with 429 and Retry-After, refused bytes count, and one upload per
// player runs at a time.
func TestEvidenceBudgets(t *testing.T) {
	small := func(c *podiumhttp.Config) {
		c.EvidenceBudgets = evidence.BudgetConfig{PlayerBytes: ratelimit.Limit{Quota: 12, Window: time.Minute}}
	}
	evidenceBackends(t, small, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		a.mkBoard("ev", `{"title":"ev","keys":[{"name":"points","order":"desc"}]}`)
		var seqs []uint64
		for i := range 4 {
			seqs = append(seqs, a.evScore("ev", adminKey, "alice", i))
		}
		carol := a.evScore("ev", adminKey, "carol", 1)
		// About 7 KiB each: the first fits the 12 KiB budget, a refused
		// (mismatching) one spends the rest.
		u1 := newUpload(t, events(190, "1"), seqs[0])
		u2 := newUpload(t, events(190, "2"), seqs[1])
		if len(u1.body) < 6<<10 || len(u1.body) > 8<<10 {
			t.Fatalf("upload of %d bytes", len(u1.body))
		}
		a.must(201, a.putEvidence("ev", "alice", adminKey, u1))
		bad := u2
		bad.content = sha([]byte("wrong"))
		sessionsEventually(t, "node b knows the scores", func() bool {
			return b.do("GET", "/v1/boards/ev/entries/alice", adminKey, nil).status == 200
		})
		r := b.putEvidence("ev", "alice", adminKey, bad)
		if r.status != 429 {
			t.Fatalf("second upload on node b: %d %s", r.status, r.body)
		}
		if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("Retry-After %q", ra)
		}
		nothingStored(t, st, "alice", seqs[1], bad, u2)
		// Another player has a budget of their own.
		b.must(201, b.putEvidence("ev", "carol", adminKey, newUpload(t, events(190, "c"), carol)))

		// One upload per player at a time (per node).
		pr, pw := io.Pipe()
		u3 := newUpload(t, events(2, "3"), seqs[2])
		req, _ := http.NewRequest("PUT", a.url+u3.path("ev", "dave"), pr)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		dave := a.evScore("ev", adminKey, "dave", 1)
		u3.seq = dave
		req.URL, _ = url.Parse(a.url + u3.path("ev", "dave"))
		done := make(chan int)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			res.Body.Close()
			done <- res.StatusCode
		}()
		pw.Write(u3.body[:5])              // the upload is running once its first bytes are read
		time.Sleep(500 * time.Millisecond) // for the handler to pass its checks and take the slot
		dave2 := a.evScore("ev", adminKey, "dave", 2)
		r = a.putEvidence("ev", "dave", adminKey, newUpload(t, events(2, "4"), dave2))
		if r.status != 429 || r.header.Get("Retry-After") != "1" {
			t.Fatalf("concurrent upload: %d %s %v", r.status, r.body, r.header)
		}
		pw.Write(u3.body[5:])
		pw.Close()
		if st := <-done; st != 201 {
			t.Fatalf("the first upload: %d", st)
		}
	})
}

// TestEvidenceExpiry: unpublished evidence expires after the board's TTL
// and is swept; published evidence is promoted to the board's retention
// at upload (or by PromoteEvidence), fixed then, never moved by reads.
func TestEvidenceExpiry(t *testing.T) {
	evidenceBackends(t, nil, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		a.mkBoard("ev", `{"title":"ev","keys":[{"name":"points","order":"desc"}],"evidence":{"ttl_seconds":3600,"retention_seconds":86400}}`)
		best := a.evScore("ev", adminKey, "alice", 10)
		worse := a.evScore("ev", adminKey, "alice", 5) // kept out: not published
		held := a.evScore("ev", adminKey, "alice", 1)  // stands for a held submission
		sessionsEventually(t, "node b knows the scores", func() bool {
			return b.do("GET", "/v1/boards/ev/entries/alice", adminKey, nil).status == 200
		})
		now := a.clock.Now()
		pub := b.must(201, b.putEvidence("ev", "alice", adminKey, newUpload(t, events(3, "best"), best))).json(t)
		if pub["promoted_at"] != now.Format("2006-01-02T15:04:05.000Z") || pub["expires_at"] != now.Add(24*time.Hour).Format("2006-01-02T15:04:05.000Z") {
			t.Fatalf("published evidence: %v", pub)
		}
		unpub := a.must(201, a.putEvidence("ev", "alice", adminKey, newUpload(t, events(3, "worse"), worse))).json(t)
		if unpub["promoted_at"] != nil || unpub["expires_at"] != now.Add(time.Hour).Format("2006-01-02T15:04:05.000Z") {
			t.Fatalf("unpublished evidence: %v", unpub)
		}
		a.must(201, a.putEvidence("ev", "alice", adminKey, newUpload(t, events(3, "held"), held)))

		// Moderation approves the held one 30 minutes later: retention
		// from then, fixed; a second promotion changes nothing.
		a.clock.Add(30 * time.Minute)
		if ok, err := b.ev.PromoteEvidence(context.Background(), "ev", "alice", held); err != nil || !ok {
			t.Fatalf("promote: %v %v", ok, err)
		}
		a.clock.Add(10 * time.Minute)
		if ok, err := a.ev.PromoteEvidence(context.Background(), "ev", "alice", held); err != nil || ok {
			t.Fatalf("promoted twice: %v %v", ok, err)
		}
		// Reads do not roll anything forward.
		for range 3 {
			a.must(200, a.do("GET", fmt.Sprintf("/v1/boards/ev/entries/alice/evidence?seq=%d", held), adminKey, nil))
		}
		ev, err := a.ev.Evidence(context.Background(), "ev", "alice", held)
		if err != nil || ev == nil || !ev.ExpiresAt.Equal(now.Add(30*time.Minute+24*time.Hour)) {
			t.Fatalf("held evidence after reads: %+v %v", ev, err)
		}

		// Past the TTL the unpublished one is gone at once, and the sweep
		// deletes it (and only it).
		a.clock.Add(21 * time.Minute)
		if r := b.do("GET", fmt.Sprintf("/v1/boards/ev/entries/alice/evidence?seq=%d", worse), adminKey, nil); r.status != 404 {
			t.Fatalf("expired evidence read: %d", r.status)
		}
		if ok, err := a.ev.PromoteEvidence(context.Background(), "ev", "alice", worse); err != nil || ok {
			t.Fatalf("promoted expired evidence: %v %v", ok, err)
		}
		if n, err := b.ev.SweepEvidence(context.Background(), 10); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if _, ok, _ := st.PlayerContent(context.Background(), "alice", sha([]byte(events(3, "worse")))); ok {
			t.Fatal("the swept evidence's content is still stored")
		}
		// A day later the retention ends for the published ones too.
		a.clock.Add(25 * time.Hour)
		if n, err := a.ev.SweepEvidence(context.Background(), 10); err != nil || n != 2 {
			t.Fatalf("sweep after retention: %d %v", n, err)
		}
	})
}

// TestEvidenceSlowBody: a body that stalls is cut with 408 and nothing is
// stored.
func TestEvidenceSlowBody(t *testing.T) {
	slowBody := func(c *podiumhttp.Config) { c.BodyTimeout = 300 * time.Millisecond }
	evidenceBackends(t, slowBody, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		a.mkBoard("ev", evBoard)
		seq := a.evScore("ev", adminKey, "alice", 10)
		ok := newUpload(t, events(3, "ok"), seq)
		// A body that stalls is cut with 408.
		pr, pw := io.Pipe()
		req, _ := http.NewRequest("PUT", a.url+ok.path("ev", "alice"), pr)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		go func() { pw.Write(ok.body[:10]) }() // then nothing
		t0 := time.Now()
		res, err := http.DefaultClient.Do(req)
		pw.Close()
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 408 || time.Since(t0) > 5*time.Second {
			t.Fatalf("slow body: %d after %s", res.StatusCode, time.Since(t0))
		}
		nothingStored(t, st, "alice", seq, ok)
	})
}

// TestEvidenceBudgetCharges (issue 17 item 15): the byte budgets are
// charged what is read, not what is declared. Two uploads that declare
// 1 MiB and send 20 bytes used to spend a 2 MiB global budget, so that
// another player's real upload got 429; now they cost 1 KiB each.
func TestEvidenceBudgetCharges(t *testing.T) {
	global := func(c *podiumhttp.Config) {
		c.EvidenceBudgets = evidence.BudgetConfig{GlobalBytes: ratelimit.Limit{Quota: 2 << 10, Window: time.Minute}}
	}
	evidenceBackends(t, global, func(t *testing.T, a, b *server, st podium.EvidenceStore) {
		a.mkBoard("ev", `{"title":"ev","keys":[{"name":"points","order":"desc"}]}`)
		h := strings.Repeat("a", 64)
		for _, p := range []string{"mallory", "mallory2"} {
			a.evScore("ev", adminKey, p, 1)
			c, err := net.Dial("tcp", strings.TrimPrefix(a.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, "PUT /v1/boards/ev/entries/"+p+"/evidence?content_sha256="+h+"&compressed_sha256="+h+" HTTP/1.1\r\nHost: podium\r\n"+
				"Authorization: Bearer "+adminKey+"\r\nContent-Length: 1048576\r\n\r\n"+strings.Repeat("x", 20))
			c.(*net.TCPConn).CloseWrite() // the body ends after 20 bytes
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err != nil || !strings.HasPrefix(line, "HTTP/1.1 4") {
				t.Fatalf("a body cut after 20 bytes: %q %v", line, err)
			}
		}
		alice := a.evScore("ev", adminKey, "alice", 1)
		sessionsEventually(t, "node b knows the score", func() bool {
			return b.do("GET", "/v1/boards/ev/entries/alice", adminKey, nil).status == 200
		})
		b.must(201, b.putEvidence("ev", "alice", adminKey, newUpload(t, events(190, "alice"), alice)))
	})
}
