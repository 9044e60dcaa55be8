package http_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/stream"
)

func dialRaw(t *testing.T, s *server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// getOn sends a GET of /healthz on c and returns the answer's status.
func getOn(t *testing.T, c net.Conn, br *bufio.Reader) int {
	t.Helper()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: podium\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET on a kept connection: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// TestConnsPerIPCap (issue 17 item 7): past MaxConnsPerIP, a new
// connection from the address is answered 429 and closed, without
// reading a request; a place freed by a closed connection is taken again;
// the connections of a trusted proxy are not capped.
func TestConnsPerIPCap(t *testing.T) {
	s := newServerOpts(t, stream.Config{}, false, func(c *podiumhttp.Config) { c.MaxConnsPerIP = 3 })
	var held []net.Conn
	for range 3 {
		c := dialRaw(t, s)
		if st := getOn(t, c, bufio.NewReader(c)); st != 200 {
			t.Fatalf("connection under the cap: %d", st)
		}
		held = append(held, c)
	}
	over := dialRaw(t, s)
	res, err := http.ReadResponse(bufio.NewReader(over), nil)
	if err != nil {
		t.Fatalf("no answer past the cap: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"code":"rate_limited"`) ||
		!strings.Contains(string(b), "at most 3") {
		t.Fatalf("past the cap: %d %v %s", res.StatusCode, res.Header, b)
	}
	// A closed connection gives its place back (once the server has seen
	// it close).
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := dialRaw(t, s)
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: podium\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && res.StatusCode == 200 {
			b, _ := io.ReadAll(res.Body)
			if !regexp.MustCompile(`(?m)^podium_http_connections_refused_total [1-9]`).Match(b) {
				t.Fatalf("metrics: refused connections not counted: %s", grepLines(string(b), "podium_http_conn"))
			}
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the place of a closed connection was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}

	t.Run("TrustedProxy", func(t *testing.T) {
		s := newServerOpts(t, stream.Config{}, false, func(c *podiumhttp.Config) {
			c.MaxConnsPerIP = 1
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		})
		for range 3 {
			c := dialRaw(t, s)
			if st := getOn(t, c, bufio.NewReader(c)); st != 200 {
				t.Fatalf("a trusted proxy's connection: %d", st)
			}
		}
	})
}

// readAnswer reads one answer on br, failing on the connection's deadline.
func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestRefusedBeforeBody (issue 17 item 7): a request with a body whose
// credentials are missing, bad or lack the scope, or whose declared length
// is over the limit, is answered at once, without waiting for the body
// (the body timeout here is a minute, past the client's 10 s), and the
// connection is closed. Expect: 100-continue gets the refusal at once and
// no 100; an authorised one gets 100 and then its answer.
func TestRefusedBeforeBody(t *testing.T) {
	s := newServerOpts(t, stream.Config{}, false, func(c *podiumhttp.Config) { c.BodyTimeout, c.RequestTimeout = time.Minute, time.Minute })
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	reader := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"r","scopes":["read"]}`)).json(t)["key"].(string)
	post := "POST /v1/boards/b/scores HTTP/1.1\r\nHost: podium\r\nContent-Type: application/json\r\n"
	for _, c := range []struct {
		name, head string
		status     int
	}{
		{"no key", "Content-Length: 100\r\n", 401},
		{"bad key", "Authorization: Bearer nope\r\nContent-Length: 100\r\n", 401},
		{"no scope", "Authorization: Bearer " + reader + "\r\nContent-Length: 100\r\n", 403},
		{"too large", "Authorization: Bearer " + adminKey + "\r\nContent-Length: 2000000\r\n", 413},
		{"chunked, no key", "Transfer-Encoding: chunked\r\n", 401},
		{"expect, bad key", "Authorization: Bearer nope\r\nContent-Length: 100\r\nExpect: 100-continue\r\n", 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := dialRaw(t, s)
			io.WriteString(conn, post+c.head+"\r\n"+`{"player":"p",`) // and no more of the body
			br := bufio.NewReader(conn)
			res, b := readAnswer(t, br)
			if res.StatusCode != c.status || !res.Close {
				t.Fatalf("%d close=%v %s", res.StatusCode, res.Close, b)
			}
			if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("after the answer: %d %v, want the connection closed", n, err)
			}
		})
	}
	t.Run("expect, authorised", func(t *testing.T) {
		conn := dialRaw(t, s)
		body := `{"player":"p","score":5}`
		io.WriteString(conn, post+"Authorization: Bearer "+adminKey+"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\nExpect: 100-continue\r\n\r\n")
		br := bufio.NewReader(conn)
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
			t.Fatalf("first line: %q %v, want 100 Continue", line, err)
		}
		br.ReadString('\n') // the empty line ending the 100
		io.WriteString(conn, body)
		if res, b := readAnswer(t, br); res.StatusCode != 200 {
			t.Fatalf("after 100: %d %s", res.StatusCode, b)
		}
	})
	if r := s.do("GET", "/v1/boards/b/entries/p", "", nil); r.status != 200 {
		t.Fatalf("the authorised request: %d", r.status)
	}
}

// TestSlowBodyMinRate (issue 17 item 7): a body that keeps trickling is
// cut once it falls below the minimum rate after the body timeout, long
// before the request timeout (a minute here, past the client's 10 s); a
// body well above the rate is read.
func TestSlowBodyMinRate(t *testing.T) {
	s := newServerOpts(t, stream.Config{}, false, func(c *podiumhttp.Config) {
		c.BodyTimeout, c.RequestTimeout, c.BodyMinRate = 300*time.Millisecond, time.Minute, 1000
	})
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	answer, _ := slowPost(t, s, func(c net.Conn) {
		for {
			time.Sleep(20 * time.Millisecond) // 50 bytes/s: progress, but too slow
			if _, err := c.Write([]byte("a")); err != nil {
				return
			}
		}
	})
	if !strings.HasPrefix(answer, "HTTP/1.1 408 ") || !strings.Contains(answer, "slower than 1000 bytes/s") {
		t.Fatalf("answer to a body below the rate: %q", answer)
	}
	// A batch of about 60 KiB, sent as fast as the client goes.
	var sb strings.Builder
	sb.WriteString(`{"scores":[`)
	for i := range 1500 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"board":"b","player":"fast` + strconv.Itoa(i) + `","score":1}`)
	}
	sb.WriteString(`]}`)
	s.must(200, s.do("POST", "/v1/scores", adminKey, sb.String()))
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
