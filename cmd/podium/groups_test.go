package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
)

// podium check (offline) reports a group board whose log disagrees with
// its set and source, and podium rebuild repairs it.
func TestGroupsCheckRebuildCLI(t *testing.T) {
	dir := t.TempDir()
	m, err := openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &aggAPI{t: t, urls: []string{m.URL()}, key: "admin-secret"}
	key := `"keys":[{"name":"p","order":"desc"}]`
	a.want(201, "PUT", "/v1/boards/clans", `{"keys":[{"name":"members","order":"desc"}],"group_set":{}}`)
	a.want(201, "PUT", "/v1/boards/pts", `{`+key+`}`)
	a.want(201, "PUT", "/v1/boards/clan-sum", `{`+key+`,"group_board":{"set":"clans","source":"pts","rule":"sum"}}`)
	a.want(201, "PUT", "/v1/groups/clans/red/members/x", ``)
	a.submit("pts", "x", 10)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Corrupt the group board's log: a row its members do not explain.
	st, err := sqlite.Open(filepath.Join(dir, dbName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last, _ := st.LastSeq(context.Background(), "clan-sum")
	err = st.Commit(context.Background(), &podium.Batch{Submissions: []podium.Submission{
		{Seq: last + 1, Board: "clan-sum", Period: "all", Player: "red", Keys: []int64{7}, At: time.Now()}}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 1 || !strings.Contains(out, "board clan-sum period all player red: want keys [10]") {
		t.Fatalf("check of a corrupted group board: exit %d\n%s", code, out)
	}
	if code, out, errs := runCLI(t, "rebuild", "--data", dir); code != 0 || !strings.Contains(out, "1 group board entries corrected") {
		t.Fatalf("rebuild: %d %s %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "check", "--data", dir); code != 0 || !strings.Contains(out, "check: ok") {
		t.Fatalf("check after rebuild: exit %d\n%s", code, out)
	}
	// After a restart the memberships are read back from the database:
	// the next change is numbered after them and moves the group.
	m, err = openMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a = &aggAPI{t: t, urls: []string{m.URL()}, key: "admin-secret"}
	a.submit("pts", "y", 5)
	if got := a.want(201, "PUT", "/v1/groups/clans/red/members/y", ``); got["n"] != 2.0 || got["members"] != 2.0 {
		t.Fatalf("a join after a restart: %v", got)
	}
	if got := a.want(200, "GET", "/v1/boards/clan-sum/entries/red", ``); fmt.Sprint(got["keys"]) != "[15]" {
		t.Fatalf("red after the join: %v", got)
	}
}
