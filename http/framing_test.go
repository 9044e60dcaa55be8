package http_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawExchange writes raw to a new connection of s and returns the answers
// read until the server closes the connection. It fails if the server
// keeps the connection open for 10 s.
func rawExchange(t *testing.T, s *server, raw string) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	var out []*http.Response
	for {
		if _, err := br.Peek(1); err != nil {
			if !errors.Is(err, io.EOF) { // a FIN: the close lingers (conn.go), never a reset

				t.Fatalf("after %d answers the connection was not closed: %v", len(out), err)
			}
			return out
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", len(out)+1, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body = io.NopCloser(strings.NewReader(string(b)))
		out = append(out, res)
	}
}

func resBody(res *http.Response) string {
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

const postHead = "POST /v1/boards/b/scores HTTP/1.1\r\nHost: podium\r\nAuthorization: Bearer " + adminKey + "\r\nContent-Type: application/json\r\n"

// TestFramingConflictRefused (issue 17 item 20): a request framed both by
// Content-Length and by Transfer-Encoding, or an HTTP/1.0 request with
// Transfer-Encoding, is answered 400 and the connection closed (RFC 9112
// section 6.1): the body is not applied, and the request pipelined after
// it is not served.
func TestFramingConflictRefused(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	score := `{"player":"smuggled","score":1}`
	chunked := "1f\r\n" + score + "\r\n0\r\n\r\n"
	next := "GET /healthz HTTP/1.1\r\nHost: podium\r\n\r\n"
	for _, c := range []struct{ name, head, why string }{
		{"CL then TE", "Content-Length: 36\r\nTransfer-Encoding: chunked\r\n", "both Content-Length and Transfer-Encoding"},
		{"TE then CL", "Transfer-Encoding: chunked\r\nContent-Length: 36\r\n", "both Content-Length and Transfer-Encoding"},
		{"folded case", "transfer-encoding: CHUNKED\r\ncontent-length:0\r\n", "both Content-Length and Transfer-Encoding"},
		{"unsupported coding", "Transfer-Encoding: gzip, chunked\r\nContent-Length: 36\r\n", "both Content-Length and Transfer-Encoding"},
		{"continued TE", "Transfer-Encoding:\r\n chunked\r\nContent-Length: 36\r\n", "both Content-Length and Transfer-Encoding"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := rawExchange(t, s, postHead+c.head+"\r\n"+chunked+next)
			if len(res) != 1 {
				t.Fatalf("%d answers, want 1 (the pipelined request must not be served)", len(res))
			}
			b := resBody(res[0])
			if res[0].StatusCode != 400 || !strings.Contains(b, `"code":"invalid_argument"`) || !strings.Contains(b, c.why) || !res[0].Close {
				t.Fatalf("answer: %d close=%v %s", res[0].StatusCode, res[0].Close, b)
			}
		})
	}
	t.Run("HTTP/1.0 with TE", func(t *testing.T) {
		head := strings.Replace(postHead, "HTTP/1.1", "HTTP/1.0", 1)
		res := rawExchange(t, s, head+"Transfer-Encoding: chunked\r\n\r\n"+chunked)
		if len(res) != 1 || res[0].StatusCode != 400 || !strings.Contains(resBody(res[0]), "Transfer-Encoding in an HTTP/1.0 request") {
			t.Fatalf("answers: %v", res)
		}
	})
	if r := s.do("GET", "/v1/boards/b/entries/smuggled", "", nil); r.status != 404 {
		t.Fatalf("a refused body was applied: %d %s", r.status, r.body)
	}
}

// TestFramingFollowsBodies: the guard follows each body to the next
// request, so bytes inside a body that look like a refused head do not
// trip it, and pipelined requests after Content-Length and chunked bodies
// (with extensions and trailers) are all served.
func TestFramingFollowsBodies(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	fake := "GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
	score := `{"player":"p","score":7}`
	raw := postHead + "Content-Length: " + strconv.Itoa(len(fake)) + "\r\n\r\n" + fake + // 400 invalid_json
		postHead + "Transfer-Encoding: chunked\r\n\r\n" + "3;ext=1\r\n" + score[:3] + "\r\n" + itoa16(len(score)-3) + "\r\n" + score[3:] + "\r\n0\r\n\r\n" +
		postHead + "Transfer-Encoding: chunked\r\n\r\n" + itoa16(len(fake)) + "\r\n" + fake + "\r\n0\r\nX-Trailer: 1\r\n\r\n" +
		"GET /healthz HTTP/1.1\r\nHost: podium\r\nConnection: close\r\n\r\n"
	res := rawExchange(t, s, raw)
	want := []int{400, 200, 400, 200}
	if len(res) != len(want) {
		t.Fatalf("%d answers, want %d", len(res), len(want))
	}
	for i, r := range res {
		if r.StatusCode != want[i] || strings.Contains(resBody(r), "framing") {
			t.Fatalf("answer %d: %d, want %d", i+1, r.StatusCode, want[i])
		}
	}
	s.must(200, s.do("GET", "/v1/boards/b/entries/p", "", nil))
}

// TestAmbiguousHeadersRefused (issue 17 item 20): Authorization or
// Idempotency-Key given twice, or an empty Idempotency-Key, is 400 and
// changes nothing.
func TestAmbiguousHeadersRefused(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	for _, c := range []struct {
		name string
		hdr  [][2]string
		want string
	}{
		{"two Authorization", [][2]string{{"Authorization", "Bearer " + adminKey}, {"Authorization", "Bearer other"}}, "Authorization header is given 2 times"},
		{"two Idempotency-Key", [][2]string{{"Authorization", "Bearer " + adminKey}, {"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}}, "Idempotency-Key header is given 2 times"},
		{"empty Idempotency-Key", [][2]string{{"Authorization", "Bearer " + adminKey}, {"Idempotency-Key", ""}}, "Idempotency-Key must be 1 to 255 bytes"},
		{"long Idempotency-Key", [][2]string{{"Authorization", "Bearer " + adminKey}, {"Idempotency-Key", strings.Repeat("k", 256)}}, "Idempotency-Key must be 1 to 255 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", s.url+"/v1/boards/b/scores", strings.NewReader(`{"player":"p","score":1}`))
			for _, h := range c.hdr {
				req.Header[h[0]] = append(req.Header[h[0]], h[1])
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b := resBody(res)
			res.Body.Close()
			if res.StatusCode != 400 || !strings.Contains(b, c.want) {
				t.Fatalf("%d %s", res.StatusCode, b)
			}
		})
	}
	if r := s.do("GET", "/v1/boards/b/entries/p", "", nil); r.status != 404 {
		t.Fatalf("a refused request was applied: %d %s", r.status, r.body)
	}
	// One of each is fine.
	s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"p","score":1}`, "Idempotency-Key", "k"))
}

func itoa16(n int) string { return strconv.FormatInt(int64(n), 16) }
