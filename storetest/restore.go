package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// testRestore: restore rows (podium import) round trip through the log
// with their kind, original at (before the rows logged ahead of them),
// period, keys and meta, and are not counted as score submissions.
func testRestore(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	b := putBoard(t, s, "daily", podium.Daily, 2)
	restore := func(seq uint64, period, player string, atMs int64, meta string, keys ...int64) podium.Submission {
		r := podium.Submission{Seq: seq, Board: b.ID, Period: period, Player: player, Kind: podium.KindRestore, Keys: keys, At: at(atMs)}
		if meta != "" {
			r.Meta = json.RawMessage(meta)
		}
		return r
	}
	subs := []podium.Submission{
		sub(b, 1, "2026-11-30", "alice", 10, 1),
		restore(2, "2026-11-28", "alice", -86_400_000, `{"map":"x"}`, -5, 1<<62),
		restore(3, "2026-11-30", "alice", 1, "", 3, 4),
	}
	upserts := []podium.Entry{
		{Board: b.ID, Period: "2026-11-28", Player: "alice", Keys: []int64{-5, 1 << 62}, At: at(-86_400_000), Seq: 2, Meta: json.RawMessage(`{"map":"x"}`)},
		{Board: b.ID, Period: "2026-11-30", Player: "alice", Keys: []int64{3, 4}, At: at(1), Seq: 3},
	}
	commit(t, s, &podium.Batch{Submissions: subs, Upserts: upserts})
	checkLog(t, logOf(t, s, b.ID), subs)
	checkEntries(t, load(t, s, b.ID, "2026-11-28"), upserts[:1])
	checkEntries(t, load(t, s, b.ID, "2026-11-30"), upserts[1:])
	got, err := s.CountSubmissions(ctx, b.ID, "2026-11-30", []string{"alice"}, 100, time.Time{}, time.Time{})
	if err != nil || got["alice"] != 1 {
		t.Errorf("CountSubmissions counts %v (%v), want the one score, not the restore", got, err)
	}
	bad := restore(4, "2026-11-30", "bob", 1, "", 1, 2)
	bad.Kind = podium.KindRestore + 1
	if err := s.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{bad}}); err == nil {
		t.Errorf("a submission of unknown kind %d was committed", bad.Kind)
	}
}
