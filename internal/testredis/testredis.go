// Package testredis starts a private redis-server for tests that stop and
// restart Redis, so that they never touch a shared instance.
package testredis

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Server is a redis-server process of a test's own.
type Server struct {
	t    testing.TB
	port int
	cmd  *exec.Cmd
}

// Start starts a redis-server without persistence on a free port; the
// test is skipped when redis-server is not installed, unless
// PODIUM_TEST_REDIS is set (CI), where it fails instead. It is stopped
// when the test ends.
func Start(t testing.TB, required bool) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if required {
			t.Fatalf("redis-server is not installed: %v", err)
		}
		t.Skip("redis-server is not installed; this test starts and stops a Redis of its own")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{t: t, port: port}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// Stop kills the server (as a crash would) and waits until it is gone.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again, empty, on the same port, and waits until
// it answers.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--logfile", "")
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if n > 0 && buf[0] == '+' {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("redis-server on port %d did not come up", s.port)
}
