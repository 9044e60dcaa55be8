package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

func (e *env) restore(board string, items ...engine.RestoreItem) []engine.RestoreResult {
	e.t.Helper()
	res, err := e.eng.Restore(context.Background(), board, items)
	if err != nil {
		e.t.Fatalf("restore %s: %v", board, err)
	}
	return res
}

// entryAt returns a player's entry keys, at and meta in a period.
func (e *env) entryAt(board, period, player string) (keys []int64, at time.Time, meta string) {
	e.t.Helper()
	p, err := e.eng.Entry(context.Background(), engine.Query{Board: board, Period: period}, player)
	if err != nil || len(p.Entries) == 0 {
		e.t.Fatalf("entry %s %s %s: %v %+v", board, period, player, err, p)
	}
	for _, en := range p.Entries {
		if en.Player == player {
			return en.Keys, en.At, string(en.Meta)
		}
	}
	e.t.Fatalf("entry %s %s %s: not in %+v", board, period, player, p.Entries)
	return nil, time.Time{}, ""
}

// A restore sets entries exactly (keys, original at, meta, in a past or
// the current period, whatever the board's mode), writes no feed event,
// is a no-op when repeated, and replays identically after a restart and
// in podium check's log replay.
func TestRestoreExactReplaysAndRepeats(t *testing.T) {
	e := newEnv(t)
	e.board("daily", podium.Sum, podium.Daily, desc("points"))
	e.submit("daily", "alice", 5)
	feedBefore := len(e.feed("daily"))
	past := time.Date(2026, 11, 28, 10, 0, 0, 7e6, time.UTC)
	items := []engine.RestoreItem{
		{Period: "2026-11-28", Player: "bob", Keys: []int64{7}, At: past},
		{Period: "2026-11-28", Player: "carol", Keys: []int64{7}, At: past.Add(-time.Hour), Meta: json.RawMessage(`{"map":"x"}`)},
		{Period: "2026-11-30", Player: "alice", Keys: []int64{2}, At: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)},
	}
	for i, r := range e.restore("daily", items...) {
		if r.Err != nil || !r.Restored || r.Unchanged || r.Seq == 0 {
			t.Fatalf("item %d: %+v", i, r)
		}
	}
	check := func() {
		t.Helper()
		eq(t, e.top("daily", "2026-11-28"), []string{"1:carol:[7]", "2:bob:[7]"})
		eq(t, e.top("daily", "current"), []string{"1:alice:[2]"}) // a sum board: restored, not added
		if _, at, meta := e.entryAt("daily", "2026-11-28", "carol"); !at.Equal(past.Add(-time.Hour)) || meta != `{"map":"x"}` {
			t.Fatalf("carol: at %v meta %s", at, meta)
		}
		if _, at, _ := e.entryAt("daily", "2026-11-28", "bob"); !at.Equal(past) {
			t.Fatalf("bob: at %v", at)
		}
		if diffs, err := e.eng.Checker().Log(context.Background()); err != nil || len(diffs) > 0 {
			t.Fatalf("CheckLog: %v %v", diffs, err)
		}
		e.checkIndexes()
	}
	check()
	if n := len(e.feed("daily")); n != feedBefore {
		t.Fatalf("a restore wrote %d feed events", n-feedBefore)
	}
	for i, r := range e.restore("daily", items...) {
		if r.Err != nil || r.Restored || !r.Unchanged || r.Seq != 0 {
			t.Fatalf("repeat, item %d: %+v", i, r)
		}
	}
	e.restart()
	check()
	for i, r := range e.restore("daily", items...) {
		if !r.Unchanged {
			t.Fatalf("repeat after restart, item %d: %+v", i, r)
		}
	}
	// A different meta or at is a change.
	items[1].Meta = nil
	items[0].At = past.Add(time.Second)
	res := e.restore("daily", items...)
	if !res[0].Restored || !res[1].Restored || !res[2].Unchanged {
		t.Fatalf("changed items: %+v", res)
	}
	eq(t, e.top("daily", "2026-11-28"), []string{"1:carol:[7]", "2:bob:[7]"})
	if _, _, meta := e.entryAt("daily", "2026-11-28", "carol"); meta != `{}` {
		t.Fatalf("carol's meta after restoring none: %s", meta)
	}
	// podium check and podium rebuild (server stopped) replay restore
	// rows as the engine does.
	e.close()
	st, err := sqlite.Open(filepath.Join(e.dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	if diffs, err := engine.CheckStore(context.Background(), st); err != nil || len(diffs) > 0 {
		t.Fatalf("CheckStore: %v %v", diffs, err)
	}
	if _, err := engine.RebuildStore(context.Background(), st); err != nil {
		t.Fatalf("RebuildStore: %v", err)
	}
	st.Close()
	e.open()
	if _, at, _ := e.entryAt("daily", "2026-11-28", "bob"); !at.Equal(past.Add(time.Second)) {
		t.Fatalf("bob after restart: at %v", at)
	}
	eq(t, e.top("daily", "2026-11-28"), []string{"1:carol:[7]", "2:bob:[7]"})
	eq(t, e.top("daily", "current"), []string{"1:alice:[2]"})
}

// Items that cannot be restored fail one by one; boards whose entries are
// derived or several values are refused whole, and nothing is written.
func TestRestoreRefusals(t *testing.T) {
	e := newEnv(t)
	e.board("b", podium.Best, podium.Daily, desc("points"))
	now := e.clock.Now()
	res := e.restore("b",
		engine.RestoreItem{Period: "2026-12-01", Player: "a", Keys: []int64{1}, At: now.Add(13 * time.Hour)},
		engine.RestoreItem{Period: "2026-11-29", Player: "a", Keys: []int64{1}, At: now.Add(-time.Hour)},
		engine.RestoreItem{Period: "2026-11-30", Player: "a", Keys: []int64{1, 2}, At: now},
		engine.RestoreItem{Period: "2026-30-11", Player: "a", Keys: []int64{1}, At: now},
		engine.RestoreItem{Period: "2026-11-30", Player: "ok", Keys: []int64{-1 << 62}, At: now},
	)
	want := []string{podium.ECodeUnprocessable, podium.ECodeUnprocessable, podium.ECodeInvalid, podium.ECodeInvalid, ""}
	for i, r := range res {
		if podium.ErrorCode(r.Err) != want[i] && !(want[i] == "" && r.Err == nil) {
			t.Fatalf("item %d: %+v, want %q", i, r, want[i])
		}
	}
	if !res[4].Restored {
		t.Fatalf("the valid item (no bounds check for an admin restore): %+v", res[4])
	}
	eq(t, e.top("b", "current"), []string{"1:ok:[-4611686018427387904]"})

	k := &podium.Board{ID: "k", Keys: []podium.KeyDef{desc("points")}, Mode: podium.BestK, Keep: 3, Public: true}
	if err := k.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	e.board("src", podium.Best, podium.Never, asc("ms"))
	e.aggMustPut(&podium.Board{ID: "agg", Keys: []podium.KeyDef{asc("ms")}, Public: true, Aggregate: &podium.Aggregate{
		Kind: podium.BestKSum, Sources: []podium.AggregateSource{{Board: "src", K: 1, Fill: []int64{1000}}}}})
	for _, id := range []string{"k", "src", "agg"} {
		_, err := e.eng.Restore(context.Background(), id, []engine.RestoreItem{{Period: "all", Player: "a", Keys: []int64{1}, At: now}})
		if podium.ErrorCode(err) != podium.ECodeConflict {
			t.Fatalf("restore into %s: %v, want conflict", id, err)
		}
	}
	if _, err := e.eng.Restore(context.Background(), "nope", nil); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("unknown board: %v", err)
	}
	if _, err := e.eng.Restore(context.Background(), "b", make([]engine.RestoreItem, engine.MaxRestore+1)); podium.ErrorCode(err) != podium.ECodeTooLarge {
		t.Fatalf("too many: %v", err)
	}
	if diffs, err := e.eng.Checker().Log(context.Background()); err != nil || len(diffs) > 0 {
		t.Fatalf("CheckLog: %v %v", diffs, err)
	}
}

// A restore is not a score: a board's quota does not count it and its
// review setting does not hold it.
func TestRestoreNotQuotaNorReview(t *testing.T) {
	e := newEnv(t)
	e.board("q", podium.Best, podium.Daily, desc("points"))
	if _, _, err := e.eng.UpdateBoard(context.Background(), &podium.BoardUpdate{ID: "q", Quota: &podium.Quota{Max: 1}}); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	if r := e.restore("q", engine.RestoreItem{Period: "2026-11-30", Player: "amy", Keys: []int64{5}, At: now.Add(-time.Hour)}); !r[0].Restored {
		t.Fatalf("restore: %+v", r)
	}
	e.submit("q", "amy", 7) // the quota of 1 is still whole
	if _, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "q", Player: "amy", Keys: []int64{8}}}, true, nil); err == nil {
		t.Fatal("a second score passed a quota of 1")
	}
	e.review("q", &podium.Review{Hold: podium.HoldAll})
	if r := e.restore("q", engine.RestoreItem{Period: "2026-11-30", Player: "bo", Keys: []int64{6}, At: now}); !r[0].Restored {
		t.Fatalf("restore on a held board: %+v", r)
	}
	eq(t, e.top("q", "current"), []string{"1:amy:[7]", "2:bo:[6]"})
	e.checkIndexes()
}

// A restore writes no feed event, and the feed's #1 follows it: a later
// score behind the restored leader is no new leader, one ahead of it is.
func TestRestoreFeedLeader(t *testing.T) {
	e := newEnv(t)
	e.board("b", podium.Best, podium.Never, desc("points"))
	e.submit("b", "alice", 10)
	if r := e.restore("b", engine.RestoreItem{Period: "all", Player: "bob", Keys: []int64{20}, At: e.clock.Now()}); !r[0].Restored {
		t.Fatalf("restore: %+v", r)
	}
	e.submit("b", "carol", 15)
	e.submit("b", "dave", 25)
	// Lines read "b/<seq>/<kind> <period> <player>(<name>) ...".
	var got []string
	for _, l := range feedLines(e.feed("b")) {
		f := strings.Fields(l)
		got = append(got, f[0][strings.LastIndexByte(f[0], '/')+1:]+" "+f[2])
	}
	want := []string{"personal_best alice(alice)", "new_leader alice(alice)", "personal_best carol(carol)",
		"personal_best dave(dave)", "new_leader dave(dave)"}
	wantLines(t, "feed", got, want)
}
