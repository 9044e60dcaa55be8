package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --log-format json: every line serve writes is one JSON object (the
// start-up, the generated admin key's file, the demo, the shutdown), and
// the generated key itself is not among them.
func TestLogFormatJSON(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", Demo: true, LogFormat: "json",
		Shutdown: time.Second}, Stderr: &logs}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(dir, keyName))
	if err != nil || len(strings.TrimSpace(string(key))) < 16 {
		t.Fatalf("no generated admin key: %v %q", err, key)
	}
	if strings.Contains(logs.String(), strings.TrimSpace(string(key))) {
		t.Errorf("the JSON logs show the admin key:\n%s", logs.String())
	}
	msgs := map[string]map[string]any{}
	sc := bufio.NewScanner(&logs)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q (%v)", sc.Text(), err)
		}
		if rec["time"] == nil || rec["level"] == nil {
			t.Errorf("a record without time or level: %q", sc.Text())
		}
		msg, _ := rec["msg"].(string)
		msgs[msg] = rec
	}
	serving, ok := msgs["podium is serving"]
	if !ok || serving["url"] != m.URL() || serving["version"] == nil {
		t.Errorf("no start-up record with url and version: %v", msgs)
	}
	if rec, ok := msgs["generated a new admin key"]; !ok || rec["file"] != filepath.Join(dir, keyName) {
		t.Errorf("no record of where the generated key is: %v", msgs)
	}
}

// --log-format takes text or json and nothing else, from the flag or
// PODIUM_LOG_FORMAT, and refuses before the data directory is touched.
func TestLogFormatValues(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{{"--log-format", "JSON"}, {"--log-format", "logfmt"}} {
		code, _, errs := runCLI(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, args...)...)
		if code != 2 || !strings.Contains(errs, "--log-format: \""+args[1]+"\" is not text or json") {
			t.Errorf("serve %v: %d %q", args, code, errs)
		}
	}
	t.Setenv("PODIUM_LOG_FORMAT", "yaml")
	if code, _, errs := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--data", dir); code != 2 || !strings.Contains(errs, `"yaml" is not text or json`) {
		t.Errorf("PODIUM_LOG_FORMAT=yaml: %d %q", code, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused --log-format left the data directory behind: %v", err)
	}
	var logs bytes.Buffer
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: t.TempDir(), Sync: "normal", AdminKey: "k", LogFormat: "text",
		Shutdown: time.Second}, Stderr: &logs}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !strings.Contains(logs.String(), `level=INFO msg="podium is serving"`) {
		t.Errorf("--log-format text is not key=value:\n%s", logs.String())
	}
}

// serve's logger writes a repeated error once per --log-repeat-every, in
// both formats.
func TestLoggerLimitsRepeats(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		log := newLogger(&out, Config{LogFormat: format, LogRepeatEvery: time.Hour})
		for range 100 {
			log.Error("store: commit failed", "err", "disk full")
		}
		log.Info("served")
		log.Info("served")
		if n := strings.Count(out.String(), "\n"); n != 3 {
			t.Errorf("%s: %d lines, want 1 error and 2 info lines:\n%s", format, n, out.String())
		}
	}
}
