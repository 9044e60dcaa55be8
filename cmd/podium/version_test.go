package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// A stamped commit replaces the build info's revision (and its "modified"
// mark, which was about that revision); a stamped date adds a "built" line.
func TestVersionStamp(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "1111111111111111111111111111111111111111"},
			{Key: "vcs.modified", Value: "true"}}}
	b := buildFrom(bi, stamp{Commit: "2222222222222222222222222222222222222222", Date: "2026-12-01T00:00:00Z"})
	if b.Revision != "2222222222222222222222222222222222222222" || b.Modified || b.Built != "2026-12-01T00:00:00Z" {
		t.Errorf("stamped commit and date: %+v", b)
	}
	if b := buildFrom(bi, stamp{Commit: "1111111111111111111111111111111111111111"}); !b.Modified {
		t.Errorf("the same commit stamped lost the modified mark: %+v", b)
	}
	var out bytes.Buffer
	buildFrom(bi, stamp{Date: "2026-12-01T00:00:00Z"}).print(&out)
	if !strings.Contains(out.String(), "  built:       2026-12-01T00:00:00Z\n") {
		t.Errorf("no built line:\n%s", out.String())
	}
	out.Reset()
	buildFrom(bi, stamp{}).print(&out)
	if strings.Contains(out.String(), "built:") {
		t.Errorf("a built line without a stamped date:\n%s", out.String())
	}
}

// The -ldflags -X names that the Dockerfile and the docs use really reach
// podium version: a binary built with them says so. This builds podium
// (a few seconds with a warm build cache), so -short skips it.
func TestVersionLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build podium to check -ldflags stamping")
	}
	bin := filepath.Join(t.TempDir(), "podium")
	ldflags := "-X main.Version=v9.8.7-test -X main.Commit=0123456789abcdef0123456789abcdef01234567 -X main.Date=2026-12-01T03:04:05Z"
	build := exec.Command(gobin, "build", "-ldflags", ldflags, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("podium version: %v", err)
	}
	for _, want := range []string{"podium v9.8.7-test\n", "  revision:    0123456789abcdef0123456789abcdef01234567\n",
		"  built:       2026-12-01T03:04:05Z\n", "  go:          go1."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("podium version lacks %q:\n%s", want, out)
		}
	}
}

// The Dockerfile stamps the variables that exist (a renamed one would be
// silently ignored by the linker) and its HEALTHCHECK runs a command that
// podium has.
func TestDockerfileMatchesBinary(t *testing.T) {
	df, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stamped := map[string]bool{}
	for _, m := range regexp.MustCompile(`-X main\.(\w+)=`).FindAllStringSubmatch(string(df), -1) {
		stamped[m[1]] = true
	}
	for _, name := range []string{"Version", "Commit", "Date"} {
		if !stamped[name] {
			t.Errorf("the Dockerfile does not stamp main.%s", name)
		}
		delete(stamped, name)
	}
	for name := range stamped {
		t.Errorf("the Dockerfile stamps main.%s, which podium does not have", name)
	}
	hc := regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/podium", "(\w+)"`).FindStringSubmatch(string(df))
	if hc == nil {
		t.Fatal("no HEALTHCHECK running /podium in the Dockerfile")
	}
	if code, _, errs := runCLI(t, hc[1], "--help"); code != 0 {
		t.Errorf("the HEALTHCHECK's command %q: %d %q", hc[1], code, errs)
	}
}
