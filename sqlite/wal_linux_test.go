package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/podiumhq/podium"
)

// walFullEnv names the directory of TestWALFullVolume's child process.
const walFullEnv = "PODIUM_TEST_WAL_FULL_DIR"

// walFullReport is what the child process reports of one run.
type walFullReport struct {
	Budget              int64
	OK, Failed, Unknown int
	FirstErr            string
	Reclaims, Stuck     uint64
	LargestWAL          int64
	LastSeq             uint64
}

// TestWALFullVolume runs podium's store on a full volume, for real and
// deterministically: a child process, in mount and user namespaces of its
// own, mounts a 3 MiB tmpfs, where writes past its size fail with ENOSPC
// and SQLite answers SQLITE_FULL. The data fits many times over; the WAL
// is what fills the volume.
//   - "no-budget": the WAL budget is set larger than the volume (as a
//     checkpoint every ~40 MB was, issue 17 item 11), so the WAL fills the
//     volume. A write that fails for lack of space checkpoints and
//     truncates the WAL and is tried once more, so every commit is stored
//     (before, every commit after the first failure failed, for good).
//   - "budget": the default budget, from the volume's size (1 MiB here):
//     the WAL never fills the volume and no checkpoint is forced.
//   - "filled": another file fills the volume while the WAL holds 512 KB.
//     The commit that meets the full volume checkpoints and truncates the
//     WAL (the database file has free pages to take it: a board was
//     deleted) and is tried again: no commit fails. Without that, no
//     commit could succeed again.
func TestWALFullVolume(t *testing.T) {
	if dir := os.Getenv(walFullEnv); dir != "" {
		walFullChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWALFullVolume$", "-test.count=1")
	cmd.Env = append(os.Environ(), walFullEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("no user namespaces here, so no tmpfs of the test's own: %v", err)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	reps := map[string]walFullReport{}
	first, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(first), &reps); err != nil {
		t.Fatalf("child's report: %v\n%s", err, out)
	}
	for name, rep := range reps {
		t.Logf("%s: %+v", name, rep)
		if rep.Unknown != 0 {
			t.Errorf("%s: %d commits failed with an unknown outcome: a full disk stores nothing", name, rep.Unknown)
		}
		if rep.LastSeq != uint64(rep.OK) {
			t.Errorf("%s: %d commits stored, %d acknowledged", name, rep.LastSeq, rep.OK)
		}
	}
	nb, b, f := reps["no-budget"], reps["budget"], reps["filled"]
	if f.Reclaims == 0 || f.Failed != 0 {
		t.Errorf("filled: %d forced checkpoints, %d of %d commits failed once the volume was full (first: %s)", f.Reclaims, f.Failed, f.OK+f.Failed, f.FirstErr)
	}
	if nb.Failed != 0 {
		t.Errorf("no-budget: %d of %d commits failed once the WAL filled the volume (first: %s)", nb.Failed, nb.OK+nb.Failed, nb.FirstErr)
	} else if nb.Reclaims == 0 {
		t.Errorf("no-budget: the WAL never came near filling the volume (largest %d): the test tests nothing", nb.LargestWAL)
	}
	if b.Failed != 0 || b.Reclaims != 0 || b.LargestWAL > b.Budget+64<<10 {
		t.Errorf("budget: %d failed, %d forced checkpoints, WAL up to %d bytes for a budget of %d", b.Failed, b.Reclaims, b.LargestWAL, b.Budget)
	}
}

// walFullChild runs in the child process: on a 3 MiB tmpfs of its own, a
// run with each budget; it prints their reports as one JSON line.
func walFullChild(dir string) {
	fail := func(err error) { fmt.Println(err); os.Exit(2) }
	reps := map[string]walFullReport{}
	for _, run := range []struct {
		name   string
		budget int64
	}{{"no-budget", 64 << 20}, {"budget", 0}, {"filled", 64 << 20}} {
		vol := filepath.Join(dir, run.name)
		if err := os.Mkdir(vol, 0o700); err != nil {
			fail(err)
		}
		if err := syscall.Mount("tmpfs", vol, "tmpfs", 0, "size=3m"); err != nil {
			fail(fmt.Errorf("mount tmpfs: %w", err))
		}
		do := walFullRun
		if run.name == "filled" {
			do = walFilledRun
		}
		rep, err := do(filepath.Join(vol, "podium.db"), run.budget)
		if err != nil {
			fail(err)
		}
		reps[run.name] = rep
	}
	b, _ := json.Marshal(reps)
	fmt.Println(string(b))
	os.Exit(0)
}

// walFullRun commits 3000 scores of one player each, one per commit, and
// reports.
func walFullRun(path string, budget int64) (walFullReport, error) {
	s, err := Open(path, Options{Sync: "normal", WALMax: budget})
	if err != nil {
		return walFullReport{}, err
	}
	defer s.Close()
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		return walFullReport{}, err
	}
	rep := walFullReport{Budget: s.WALMax()}
	for i := range 3000 {
		err := s.Commit(ctx, scores("b", uint64(rep.OK+1), 1))
		rep.LargestWAL = max(rep.LargestWAL, s.walSize())
		switch {
		case err == nil:
			rep.OK++
			continue
		case errors.Is(err, podium.ErrOutcomeUnknown):
			rep.Unknown++
		}
		if rep.Failed++; rep.FirstErr == "" {
			rep.FirstErr = strconv.Itoa(i) + ": " + err.Error()
		}
	}
	rep.Reclaims, rep.Stuck = s.WALReclaims()
	rep.LastSeq, err = s.LastSeq(ctx, "b")
	return rep, err
}

// walFilledRun deletes a board (leaving free pages in the database file),
// commits until the WAL holds 512 KB, fills the rest of the volume with
// another file, and commits 200 scores, one per commit.
func walFilledRun(path string, budget int64) (walFullReport, error) {
	s, err := Open(path, Options{Sync: "normal", WALMax: budget})
	if err != nil {
		return walFullReport{}, err
	}
	defer s.Close()
	for _, b := range []string{"old", "b"} {
		if err := s.PutBoard(ctx, board(b, 1)); err != nil {
			return walFullReport{}, err
		}
	}
	for i := range 20 {
		if err := s.Commit(ctx, scores("old", uint64(i*100+1), 100)); err != nil {
			return walFullReport{}, err
		}
	}
	if err := s.DeleteBoard(ctx, "old"); err != nil {
		return walFullReport{}, err
	}
	if err := s.Checkpoint(ctx); err != nil {
		return walFullReport{}, err
	}
	rep := walFullReport{Budget: s.WALMax()}
	for s.walSize() < 512<<10 {
		if err := s.Commit(ctx, scores("b", uint64(rep.OK+1), 1)); err != nil {
			return rep, err
		}
		rep.OK++
	}
	if err := fillVolume(filepath.Join(filepath.Dir(path), "ballast")); err != nil {
		return rep, err
	}
	for i := range 200 {
		err := s.Commit(ctx, scores("b", uint64(rep.OK+1), 1))
		rep.LargestWAL = max(rep.LargestWAL, s.walSize())
		switch {
		case err == nil:
			rep.OK++
			continue
		case errors.Is(err, podium.ErrOutcomeUnknown):
			rep.Unknown++
		}
		if rep.Failed++; rep.FirstErr == "" {
			rep.FirstErr = strconv.Itoa(i) + ": " + err.Error()
		}
	}
	rep.Reclaims, rep.Stuck = s.WALReclaims()
	rep.LastSeq, err = s.LastSeq(ctx, "b")
	return rep, err
}

// fillVolume writes a file until the volume is full.
func fillVolume(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}
