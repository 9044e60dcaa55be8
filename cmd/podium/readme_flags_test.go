package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestREADMEFlagTable: the README's table of `podium serve` flags (under
// "## Configuration") lists every flag of serve's flag set, no flag that
// does not exist, each with its environment variable and, where the default
// column is a single value, the flag's default.
func TestREADMEFlagTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&Config{}).flags(fs)

	rows := readmeFlagRows(t, string(readme))
	listed := map[string]bool{}
	for _, r := range rows {
		if listed[r.flag] {
			t.Errorf("README lists --%s twice", r.flag)
		}
		listed[r.flag] = true
		f := fs.Lookup(r.flag)
		if f == nil {
			t.Errorf("README lists --%s, which podium serve does not have", r.flag)
			continue
		}
		if want := "`" + envName(r.flag) + "`"; r.env != want {
			t.Errorf("README: --%s's variable is %s, want %s", r.flag, r.env, want)
		}
		if def, ok := singleValue(r.def); ok && !sameDefault(def, f.DefValue) {
			t.Errorf("README: --%s's default is %q, the flag's %q", r.flag, def, f.DefValue)
		}
	}
	var missing []string
	fs.VisitAll(func(f *flag.Flag) {
		if !listed[f.Name] {
			missing = append(missing, "--"+f.Name)
		}
	})
	if len(missing) > 0 {
		t.Errorf("README's flag table leaves out %d serve flags: %s", len(missing), strings.Join(missing, ", "))
	}
}

type readmeFlagRow struct{ flag, env, def string }

var flagCell = regexp.MustCompile("^`--([a-z0-9-]+)`$")

// readmeFlagRows returns the rows of the first table after
// "## Configuration" whose first cell is a flag.
func readmeFlagRows(t *testing.T, readme string) []readmeFlagRow {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n## Configuration\n")
	if !ok {
		t.Fatal("README has no ## Configuration section")
	}
	section, _, _ := strings.Cut(after, "\n## ")
	var rows []readmeFlagRow
	in := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if in {
				break // the end of the table
			}
			continue
		}
		in = true
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 4 {
			continue
		}
		m := flagCell.FindStringSubmatch(strings.TrimSpace(cells[0]))
		if m == nil {
			continue // the header, its rule, PODIUM_ADMIN_KEY (no flag)
		}
		rows = append(rows, readmeFlagRow{flag: m[1], env: strings.TrimSpace(cells[1]), def: strings.TrimSpace(cells[2])})
	}
	if len(rows) == 0 {
		t.Fatal("no flag rows found in README's Configuration table")
	}
	return rows
}

// singleValue returns the value of a default cell that is one `value`.
func singleValue(cell string) (string, bool) {
	if len(cell) < 2 || cell[0] != '`' || cell[len(cell)-1] != '`' || strings.Count(cell, "`") != 2 {
		return "", false
	}
	return cell[1 : len(cell)-1], true
}

// sameDefault compares a README default with a flag's DefValue; durations
// compare as durations (`48h` is 48h0m0s).
func sameDefault(readme, def string) bool {
	if readme == def {
		return true
	}
	a, errA := time.ParseDuration(readme)
	b, errB := time.ParseDuration(def)
	return errA == nil && errB == nil && a == b
}

// The table's parser finds what it should: a made-up README with a flag
// too many and one too few fails the comparison (the parser is not
// vacuous).
func TestREADMEFlagRowsParser(t *testing.T) {
	rows := readmeFlagRows(t, "# x\n\n## Configuration\n\ntext\n\n| flag | environment | default | meaning |\n| --- | --- | --- | --- |\n"+
		"| `--addr` | `PODIUM_ADDR` | `:8080` | address |\n| — | `PODIUM_ADMIN_KEY` | generated | key |\n| `--nope` | `PODIUM_NOPE` | off | x |\n\nafter\n\n## Next\n")
	got := []string{}
	for _, r := range rows {
		got = append(got, r.flag+"="+r.def)
	}
	if !slices.Equal(got, []string{"addr=`:8080`", "nope=off"}) {
		t.Fatalf("rows %v", got)
	}
}
