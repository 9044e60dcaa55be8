package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run podium in a child process: the test binary runs
// main's run with the arguments in PODIUM_TEST_RUN_MAIN (JSON) instead of
// the tests. The child is a real process, so a test can kill -9 it.
func TestMain(m *testing.M) {
	if args := os.Getenv("PODIUM_TEST_RUN_MAIN"); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			panic(err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		var code int
		if f := os.Getenv("PODIUM_TEST_CLOCK_FILE"); f != "" {
			code = serveOnFileClock(ctx, argv, f) // league_kill_test.go
		} else {
			code = run(ctx, argv, os.Stdout, os.Stderr)
		}
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

var servingURL = regexp.MustCompile(`msg="podium is serving" url=(\S+)`)

// startProcess runs podium with args in a child process and waits until it
// serves; it returns the process and the server's URL. The child is
// killed when the test ends.
func startProcess(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	argv, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "PODIUM_TEST_RUN_MAIN="+string(argv)), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("podium %v exited before serving", args)
		}
		go func() {
			for range found { // keep draining so the child never blocks on stderr
			}
		}()
		return cmd, url
	case <-time.After(20 * time.Second):
		t.Fatalf("podium %v did not start serving within 20 s", args)
	}
	return nil, ""
}
