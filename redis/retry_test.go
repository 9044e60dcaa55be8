package redis_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/redis"
)

// replyDropper is a TCP proxy in front of a real Redis that forwards every
// command and its reply, except that it closes the client's connection
// instead of relaying the reply of a command containing marker: the
// command has run in Redis, and the client sees its connection end. It
// counts how many such commands reached Redis.
type replyDropper struct {
	ln      net.Listener
	target  string
	marker  []byte
	dropped atomic.Int32
	wg      sync.WaitGroup
}

func newReplyDropper(t *testing.T, target, marker string) *replyDropper {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyDropper{ln: ln, target: target, marker: []byte(marker)}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *replyDropper) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.serve(c) }()
	}
}

// serve relays one client connection both ways. go-redis waits for the
// replies of what it sent before it sends more on a connection, so the
// first bytes from Redis after a command containing the marker are that
// command's reply: they are dropped with the connection.
func (p *replyDropper) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	var marked atomic.Bool
	go func() {
		defer s.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			if bytes.Contains(bytes.ToUpper(buf[:n]), p.marker) {
				marked.Store(true)
			}
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if err != nil {
			return
		}
		if marked.Load() {
			p.dropped.Add(1)
			return // the command ran; its reply is lost with the connection
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

// TestLimiterDoesNotRetryATake: a take whose reply is lost has been
// charged in Redis, so sending it again charges the bucket again. The
// limiter says it does not retry (a failed take is decided in process),
// but go-redis reads MaxRetries 0 as "the default, 3": one lost reply
// charged a bucket four times, and a client within its limit got 429.
func TestLimiterDoesNotRetryATake(t *testing.T) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		t.Skip("PODIUM_TEST_REDIS is not set; set it to a redis:// URL to run the Redis retry test")
	}
	target := strings.TrimPrefix(url, "redis://")
	target, _, _ = strings.Cut(target, "/")
	if at := strings.LastIndex(target, "@"); at >= 0 {
		target = target[at+1:]
	}
	p := newReplyDropper(t, target, "EVALSHA")
	l, err := redis.OpenLimiter("redis://"+p.ln.Addr().String()+"/0", env(t), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lim := ratelimit.Limit{Quota: 3, Window: time.Hour}
	_, err = l.Take(context.Background(), "k", lim, 1, time.Now())
	if err == nil {
		t.Fatal("a take whose reply was lost reported no error")
	}
	if got := p.dropped.Load(); got != 1 {
		t.Fatalf("the take ran %d times in Redis; want 1 (it must not be retried)", got)
	}
}
