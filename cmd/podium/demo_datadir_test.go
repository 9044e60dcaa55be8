package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve --demo keeps its data in ./podium-demo-data unless --data or
// PODIUM_DATA names a directory; without --demo the default stays.
func TestDemoDataDir(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string // PODIUM_DATA, "" for unset
		args []string
		want string
	}{
		{"Demo", "", []string{"--demo"}, demoDataDir},
		{"DemoWithData", "", []string{"--demo", "--data", "/srv/x"}, "/srv/x"},
		{"DemoWithDefaultNamed", "", []string{"--demo", "--data", "./podium-data"}, "./podium-data"},
		{"DemoWithEnvironment", "/srv/env", []string{"--demo"}, "/srv/env"},
		{"NoDemo", "", nil, "./podium-data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("PODIUM_DATA", c.env)
			} else {
				t.Setenv("PODIUM_DATA", "")
				os.Unsetenv("PODIUM_DATA")
			}
			var cfg Config
			fs := newFlagSet("serve", "", io.Discard)
			cfg.flags(fs)
			if err := parse(fs, c.args); err != nil {
				t.Fatal(err)
			}
			useDemoDataDir(fs, &cfg)
			if cfg.Data != c.want {
				t.Errorf("serve %v (PODIUM_DATA=%q): data %q, want %q", c.args, c.env, cfg.Data, c.want)
			}
		})
	}
}

// The README's first command, as a process in an empty directory: the demo
// creates ./podium-demo-data and leaves ./podium-data alone.
func TestDemoDataDirProcess(t *testing.T) {
	wd := t.TempDir()
	argv, _ := json.Marshal([]string{"serve", "--demo", "--addr", "127.0.0.1:0"})
	cmd := exec.Command(os.Args[0])
	cmd.Dir = wd
	for _, kv := range os.Environ() { // no PODIUM_DATA, PODIUM_DEMO, ... from the test's environment
		if !strings.HasPrefix(kv, "PODIUM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PODIUM_TEST_RUN_MAIN="+string(argv))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `msg="podium is serving"`) {
				line <- sc.Text()
			}
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatal("serve --demo exited before serving")
		}
		if !strings.Contains(l, "data="+demoDataDir) {
			t.Errorf("serve --demo does not say it uses %s: %q", demoDataDir, l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve --demo did not start within 20 s")
	}
	if _, err := os.Stat(filepath.Join(wd, "podium-demo-data", "podium.db")); err != nil {
		t.Errorf("no demo database: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wd, "podium-data")); !os.IsNotExist(err) {
		t.Errorf("serve --demo touched ./podium-data: %v", err)
	}
}
