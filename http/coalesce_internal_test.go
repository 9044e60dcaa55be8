package http

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// countingListener counts the Write calls on the connections it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}

// TestLargeAnswerOneWrite: an answer larger than net/http's 4 KiB buffer,
// written whole with its length (a top-100 page), leaves in one write on a
// kept-alive connection, intact, and answers to pipelined requests arrive
// in order; a short answer is not held. Without coalesce.go a 12 KB answer
// took two writes.
func TestLargeAnswerOneWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: ln}
	s := &Server{conns: newConnMetrics(prometheus.NewRegistry())}
	big := bytes.Repeat([]byte("x"), 12<<10)
	hs := &http.Server{ConnContext: s.ConnContext, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: 200, conn: connOf(r), http1: isHTTP1(r)}
		body := big
		if r.URL.Path == "/small" {
			body = []byte(`"ok"`)
		}
		writeJSON(sw, http.StatusOK, append([]byte(nil), body...))
	})}
	go hs.Serve(s.Listener(counted))
	t.Cleanup(func() { hs.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	read := func(want int) {
		t.Helper()
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		if err != nil || len(b) != want+1 || b[len(b)-1] != '\n' {
			t.Fatalf("answer: %d bytes, %v; want %d", len(b), err, want+1)
		}
	}
	for i := 1; i <= 3; i++ {
		io.WriteString(c, "GET /big HTTP/1.1\r\nHost: podium\r\n\r\n")
		read(len(big))
		if n := counted.writes.Load(); n != int64(i) {
			t.Fatalf("after %d answers of %d bytes: %d writes, want one each", i, len(big), n)
		}
	}
	io.WriteString(c, "GET /small HTTP/1.1\r\nHost: podium\r\n\r\n")
	read(4)
	// Pipelined: the answers come back whole and in order.
	io.WriteString(c, strings.Repeat("GET /big HTTP/1.1\r\nHost: podium\r\n\r\nGET /small HTTP/1.1\r\nHost: podium\r\n\r\n", 2))
	for range 2 {
		read(len(big))
		read(4)
	}
}

// TestCloseDuringBlockedWrite: Close from another goroutine (Shutdown, a
// dropped stream) is not held up by a write blocked on a client that does
// not read; it ends the write. The connection's write lock used to be held
// across the socket write, so Close waited for it forever here.
func TestCloseDuringBlockedWrite(t *testing.T) {
	srv, client := net.Pipe()
	defer client.Close()
	c := &conn{Conn: srv, m: newConnMetrics(prometheus.NewRegistry())}
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 64<<10))
		done <- err
	}()
	// One byte read: the write is under way and blocked on the rest.
	if _, err := io.ReadFull(client, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-done; err == nil {
		t.Fatal("the blocked write did not fail when the connection closed")
	}
}

// TestHeldAnswerKeepsItsWriteDeadline: net/http clears the write deadline
// once an answer is written, then sets the read deadline. A held answer
// sent at that point went out with no deadline at all, so a client that
// never reads held the connection and its goroutine forever; it is now
// sent before the deadline it was written under is cleared, and fails
// when that deadline has passed.
func TestHeldAnswerKeepsItsWriteDeadline(t *testing.T) {
	srv, client := net.Pipe() // nothing reads client: every write blocks
	defer client.Close()
	c := &conn{Conn: srv, m: newConnMetrics(prometheus.NewRegistry())}
	defer c.closeNow()
	done := make(chan error, 1)
	go func() {
		c.SetWriteDeadline(time.Unix(1, 0)) // the answer's deadline, here already past
		c.holdAnswer()
		if _, err := c.Write(make([]byte, 12<<10)); err != nil {
			done <- err
			return
		}
		c.SetWriteDeadline(time.Time{}) // as net/http after the answer
		done <- c.SetReadDeadline(time.Time{})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the held answer's write is still blocked: it went out without its write deadline")
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("a write after the held answer failed was accepted")
	}
}
