package main

import (
	"strings"
	"testing"
)

// TestBadAddrIsUsage: a port out of range is a mistake on the command line
// (exit 2, with the pointer to --help), found before anything is bound or
// touched, like every bad flag value.
func TestBadAddrIsUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:99999", "--data", dir},
		{"serve", "--addr", "127.0.0.1:8080", "--debug-addr", "127.0.0.1:70000", "--data", dir},
		{"serve", "--addr", "127.0.0.1:nosuchservice", "--data", dir},
		{"healthcheck", "--addr", ":123456"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "--help") || !strings.Contains(errs, "out of range") && !strings.Contains(errs, "unknown port") {
			t.Errorf("%v: exit %d, %q; want 2 and a pointer to --help", args, code, errs)
		}
	}
	if err := checkAddr(":http", ":8080"); err != nil {
		t.Errorf("a service name: %v", err)
	}
}

// TestDidYouMean: a mistyped command or flag gets the name meant.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serv"}, "did you mean serve?"},
		{[]string{"chekc"}, "did you mean check?"},
		{[]string{"healtcheck"}, "did you mean healthcheck?"},
		{[]string{"serve", "--port", "8080"}, "did you mean --addr?"},
		{[]string{"serve", "--adr", ":8080"}, "did you mean --addr?"},
		{[]string{"serve", "--log-levle", "debug"}, "did you mean --log-level?"},
		{[]string{"check", "--database", "x"}, "did you mean --db?"},
		{[]string{"check", "--dta", "x"}, "did you mean --data?"},
		{[]string{"backup", "--output", "x"}, "did you mean --to?"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "--help") {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if code, _, errs := runCLI(t, "xyzzy"); code != 2 || strings.Contains(errs, "did you mean") {
		t.Errorf("a name like none: exit %d, %q", code, errs)
	}
}

// TestVersionHelp: podium version --help prints its usage, not the version.
func TestVersionHelp(t *testing.T) {
	code, out, _ := runCLI(t, "version", "--help")
	if code != 0 || !strings.Contains(out, "Usage: podium version") || strings.HasPrefix(out, "podium ") {
		t.Fatalf("version --help: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "version", "--json"); code != 2 || !strings.Contains(errs, "unknown flag --json") {
		t.Fatalf("version --json: %d %q", code, errs)
	}
	if code, out, _ := runCLI(t, "version"); code != 0 || !strings.HasPrefix(out, "podium ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

// TestCheckURLSetupError: check --url with no admin key, or with a key the
// server refuses, is a setup error (exit 3, its own message), not a check
// that found "1 difference(s)".
func TestCheckURLSetupError(t *testing.T) {
	m := testMain(t, t.TempDir())
	defer m.Close()
	t.Setenv("PODIUM_ADMIN_KEY", "")
	code, out, errs := runCLI(t, "check", "--url", m.URL(), "--data", t.TempDir())
	if code != 3 || !strings.Contains(errs, "setup error: no admin key") || strings.Contains(out, "difference") {
		t.Fatalf("no key: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Setenv("PODIUM_ADMIN_KEY", "not-the-key")
	code, out, errs = runCLI(t, "check", "--url", m.URL())
	if code != 3 || !strings.Contains(errs, "refused the admin key") || strings.Contains(out, "difference") {
		t.Fatalf("a refused key: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runCLI(t, "rebuild", "--url", m.URL())
	if code != 3 || !strings.Contains(errs, "refused the admin key") {
		t.Fatalf("rebuild with a refused key: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "export", "--url", m.URL(), "--out", t.TempDir()+"/dump.jsonl")
	if code != 3 || !strings.Contains(errs, "setup error") {
		t.Fatalf("export with a refused key: exit %d, stderr %q", code, errs)
	}
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	if code, out, errs := runCLI(t, "check", "--url", m.URL()); code != 0 {
		t.Fatalf("the right key: exit %d, %s %s", code, out, errs)
	}
}
