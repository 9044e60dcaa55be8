//go:build unix

package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
)

// TestSlowAnswerReaderIsCut: the answer to a request must be taken within
// the request timeout; a client that does not read it loses the
// connection instead of holding it.
func TestSlowAnswerReaderIsCut(t *testing.T) {
	s := newTimedServer(t, time.Minute, 300*time.Millisecond)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	// Enough entries for answers far larger than the socket buffers,
	// stored through the engine: over HTTP they would take longer than the
	// short request timeout under the race detector.
	scores := make([]engine.Score, 1000)
	for i := range scores {
		scores[i] = engine.Score{Board: "b", Player: "player-with-a-long-name-" + strings.Repeat("x", 60) + "-" + strconv.Itoa(i),
			Keys: []int64{1}, Meta: json.RawMessage(`{"pad":"` + strings.Repeat("y", 400) + `"}`)}
	}
	if _, err := s.eng.Submit(context.Background(), scores, false, nil); err != nil {
		t.Fatal(err)
	}

	// A small receive window from the start, so that the answers cannot
	// all sit in socket buffers.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Pipeline many reads of the full page and read none of the answers.
	req := "GET /v1/boards/b/entries?limit=1000 HTTP/1.1\r\nHost: podium\r\n\r\n"
	if _, err := io.WriteString(c, strings.Repeat(req, 20)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1 * time.Second) // past the request timeout, reading nothing
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, bufio.NewReader(c))
	if err != nil {
		t.Fatalf("the server kept the connection of a client that does not read: %v", err)
	}
	if full := int64(20 * 1000 * 500); n >= full {
		t.Fatalf("read %d bytes, all of the answers: nothing was cut", n)
	}
}
