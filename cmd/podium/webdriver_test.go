package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A minimal WebDriver client (W3C protocol, JSON over HTTP) for driving
// headless Chromium through chromedriver, so that the browser test needs
// no Go dependency.

// wdDriver is a running chromedriver.
type wdDriver struct {
	url string
	hc  *http.Client
}

// wdSession is one browser session.
type wdSession struct {
	t   *testing.T
	d   *wdDriver
	url string // the driver URL + /session/<id>
}

// wdLogEntry is a browser console message.
type wdLogEntry struct {
	Level     string `json:"level"`
	Message   string `json:"message"`
	Source    string `json:"source"`
	Timestamp int64  `json:"timestamp"`
}

// browserFreePort returns a TCP port that was free a moment ago on
// 127.0.0.1.
func browserFreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startChromedriver runs chromedriver on a free port until the test ends.
func startChromedriver(t *testing.T, path string) *wdDriver {
	t.Helper()
	port := browserFreePort(t)
	var out browserOutput
	cmd := exec.Command(path, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromedriver: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("chromedriver output:\n%s", out.String())
		}
	})
	d := &wdDriver{url: "http://127.0.0.1:" + strconv.Itoa(port), hc: &http.Client{Timeout: 30 * time.Second}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		v, err := d.call("GET", d.url+"/status", nil)
		if err == nil {
			var st struct {
				Ready bool `json:"ready"`
			}
			if json.Unmarshal(v, &st) == nil && st.Ready {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not become ready on port %d: %v\n%s", port, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends one WebDriver command and returns its "value".
func (d *wdDriver) call(method, url string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	res, err := d.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("webdriver %s %s: HTTP %d: %.200s", method, url, res.StatusCode, raw)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		json.Unmarshal(env.Value, &e)
		return nil, fmt.Errorf("webdriver %s %s: %s: %s", method, url, e.Error, e.Message)
	}
	return env.Value, nil
}

// newSession starts headless Chromium with a throwaway profile; the
// session ends with the test.
func (d *wdDriver) newSession(t *testing.T, chromium string) *wdSession {
	t.Helper()
	return d.newSessionWith(t, chromium, nil)
}

// newPhoneSession starts a session that emulates a phone: a viewport
// width px wide and height px high (CSS pixels, device pixel ratio 1, so
// that screenshots stay small), touch, and a mobile user agent.
func (d *wdDriver) newPhoneSession(t *testing.T, chromium string, width, height int) *wdSession {
	t.Helper()
	return d.newSessionWith(t, chromium, map[string]any{"mobileEmulation": map[string]any{
		"deviceMetrics": map[string]any{"width": width, "height": height, "pixelRatio": 1, "touch": true, "mobile": true},
	}})
}

// newSessionWith starts a session with extra goog:chromeOptions.
func (d *wdDriver) newSessionWith(t *testing.T, chromium string, extra map[string]any) *wdSession {
	t.Helper()
	opts := map[string]any{
		"binary": chromium,
		"args": []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
			"--window-size=1200,900", "--user-data-dir=" + t.TempDir()},
	}
	for k, v := range extra {
		opts[k] = v
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": opts,
		"goog:loggingPrefs":  map[string]string{"browser": "ALL"},
		// Failure timeouts only: on a loaded 2-core machine a page took
		// over 15 s to load ("Timed out receiving message from renderer").
		"timeouts": map[string]int{"pageLoad": 60000, "script": 30000},
	}}}
	v, err := d.call("POST", d.url+"/session", caps)
	if err != nil {
		t.Fatalf("start a browser session: %v", err)
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(v, &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("start a browser session: unexpected answer %s", v)
	}
	s := &wdSession{t: t, d: d, url: d.url + "/session/" + sess.SessionID}
	t.Cleanup(func() { d.call("DELETE", s.url, nil) })
	return s
}

// open navigates to url and waits for the page to load.
func (s *wdSession) open(url string) {
	s.t.Helper()
	if _, err := s.d.call("POST", s.url+"/url", map[string]string{"url": url}); err != nil {
		s.t.Fatalf("open %s: %v", url, err)
	}
}

// exec runs script (a function body; arguments in `arguments`) in the page
// and decodes its return value into out.
func (s *wdSession) exec(out any, script string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	v, err := s.d.call("POST", s.url+"/execute/sync", map[string]any{"script": script, "args": args})
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(v, out)
}

// waitString polls script, which returns a string, until ok accepts it or
// timeout passes; it returns the last value and whether ok accepted it.
func (s *wdSession) waitString(timeout time.Duration, script string, ok func(string) bool) (string, bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		var v string
		err := s.exec(&v, script)
		if err == nil {
			last = v
			if ok(v) {
				return v, true
			}
		} else {
			last = "error: " + err.Error()
		}
		if time.Now().After(deadline) {
			return last, false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// screenshot saves a PNG of the window to path.
func (s *wdSession) screenshot(path string) {
	s.t.Helper()
	v, err := s.d.call("GET", s.url+"/screenshot", nil)
	if err != nil {
		s.t.Fatalf("screenshot: %v", err)
	}
	var b64 string
	if err := json.Unmarshal(v, &b64); err != nil {
		s.t.Fatalf("screenshot: %v", err)
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		s.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot: %s", path)
}

// consoleLog returns (and clears) the browser's console messages.
func (s *wdSession) consoleLog() []wdLogEntry {
	s.t.Helper()
	v, err := s.d.call("POST", s.url+"/se/log", map[string]string{"type": "browser"})
	if err != nil {
		s.t.Logf("reading the browser console is not supported here: %v", err)
		return nil
	}
	var entries []wdLogEntry
	if err := json.Unmarshal(v, &entries); err != nil {
		s.t.Logf("browser console: %v", err)
	}
	return entries
}

// browserOutput collects the output of a process or a server for the failure
// report.
type browserOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *browserOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *browserOutput) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
