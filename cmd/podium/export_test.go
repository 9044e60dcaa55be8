package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeExporter is a server whose board export says it was not consistent
// (the board took writes meanwhile) for the first torn answers.
func fakeExporter(t *testing.T, torn int32) (string, *atomic.Int32) {
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/boards", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"boards":[{"id":"b","title":"","keys":[{"name":"n","order":"desc"}],"mode":"best","reset":{"every":"none","tz":"UTC"},"public":true,"meta":{}}]}`)
	})
	mux.HandleFunc("GET /v1/boards/b/periods", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"board":"b","current":"all","periods":[{"id":"all","entries":1}]}`)
	})
	mux.HandleFunc("GET /v1/boards/b/export", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("include_hidden") != "true" || r.URL.Query().Get("period") != "all" {
			t.Errorf("export query: %s", r.URL.RawQuery)
		}
		n := calls.Add(1)
		w.Header().Set("Trailer", "Podium-Export-Consistent")
		fmt.Fprint(w, `{"export":"podium.entries","board":{},"period":"all","seq":1,"total":1}`+"\n")
		fmt.Fprintf(w, `{"rank":1,"player":"p%d","name":"p","keys":[1],"at":"2026-11-30T10:00:00.000Z","meta":{}}`+"\n", n)
		fmt.Fprint(w, `{"end":true,"entries":1,"seq":1,"consistent":true}`+"\n")
		w.Header().Set("Podium-Export-Consistent", fmt.Sprint(n > torn))
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL, &calls
}

// An export reads a period again while it comes back torn, writes only
// the consistent read, and after 3 torn reads fails naming the period and
// leaves no dump behind.
func TestExportRetriesTornPeriods(t *testing.T) {
	t.Setenv("PODIUM_ADMIN_KEY", "k")
	dir := t.TempDir()
	base, calls := fakeExporter(t, 2)
	out := filepath.Join(dir, "d.jsonl")
	if code, _, errs := runCLI(t, "export", "--url", base, "--out", out); code != 0 || calls.Load() != 3 {
		t.Fatalf("export after 2 torn reads: %d, %d calls: %s", code, calls.Load(), errs)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), `"player":"p3"`) || strings.Contains(string(b), `"player":"p1"`) || strings.Contains(string(b), `"player":"p2"`) {
		t.Fatalf("the dump holds other reads than the consistent one:\n%s", b)
	}
	base, calls = fakeExporter(t, 3)
	out = filepath.Join(dir, "e.jsonl")
	code, _, errs := runCLI(t, "export", "--url", base, "--out", out)
	if code != 1 || calls.Load() != 3 || !strings.Contains(errs, "board b period all: the board took writes during each of 3 exports") {
		t.Fatalf("export of an always torn period: %d, %d calls: %s", code, calls.Load(), errs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "e.jsonl*")); len(left) != 0 {
		t.Fatalf("a failed export left %v", left)
	}
	if code, _, errs := runCLI(t, "export", "--out", out); code != 2 || !strings.Contains(errs, "--url") {
		t.Fatalf("no --url: %d %s", code, errs)
	}
}
