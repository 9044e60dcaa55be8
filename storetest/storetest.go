// Package storetest is the contract suite that every podium.Store passes.
// An adapter's tests call Run with a function that opens a fresh, empty
// store; each subtest opens its own.
//
// Beyond the podium.Store doc comments, the suite pins down what the engine
// and the HTTP layer rely on:
//   - times are kept to the millisecond and compared as instants;
//   - an absent, null or empty meta object reads back as {}, never nil;
//   - in a Batch the deletes apply before the upserts, and a later upsert of
//     the same entry wins;
//   - an idempotency record whose scope and key are already stored keeps the
//     first answer;
//   - rows that meet within one batch end as storing them one by one would
//     leave them (testWithinBatch);
//   - Periods are newest first, which for the ids of one cadence ("2026-11-30",
//     "2026-W48", "2026-11") is descending text order;
//   - LoadEntries and Log stop at, and return, the first error of their
//     callback.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// Run runs the contract suite against the stores that open returns. open
// must return a new, empty store and arrange for it to be closed when t
// ends.
func Run(t *testing.T, open func(t *testing.T) podium.Store) {
	t.Run("Ping", func(t *testing.T) {
		if err := open(t).Ping(context.Background()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
	t.Run("Boards", func(t *testing.T) { testBoards(t, open) })
	t.Run("DeleteBoard", func(t *testing.T) { testDeleteBoard(t, open) })
	t.Run("BoardParts", func(t *testing.T) { testBoardParts(t, open) }) // board_parts.go
	t.Run("Players", func(t *testing.T) { testPlayers(t, open) })
	t.Run("Keys", func(t *testing.T) { testKeys(t, open) })
	t.Run("Commit", func(t *testing.T) { testCommit(t, open) })
	t.Run("Idempotency", func(t *testing.T) { testIdempotency(t, open) })
	t.Run("ReplaceEntries", func(t *testing.T) { testReplaceEntries(t, open) })
	t.Run("LoadEntries", func(t *testing.T) { testLoadEntries(t, open) })
	t.Run("Log", func(t *testing.T) { testLog(t, open) })
	t.Run("Watermarks", func(t *testing.T) { testWatermarks(t, open) })
	t.Run("Periods", func(t *testing.T) { testPeriods(t, open) })
	t.Run("WithinBatch", func(t *testing.T) { testWithinBatch(t, open) })
	t.Run("Results", func(t *testing.T) { testBestKResults(t, open) }) // results.go
	t.Run("Feed", func(t *testing.T) { testFeed(t, open) })
	t.Run("Tourney", func(t *testing.T) { testTourney(t, open) })         // tourney.go
	t.Run("League", func(t *testing.T) { testLeague(t, open) })           // league.go
	t.Run("LeagueMany", func(t *testing.T) { testLeagueMany(t, open) })   // league.go
	t.Run("LeaguePages", func(t *testing.T) { testLeaguePages(t, open) }) // league_pages.go
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open) })       // session.go
	t.Run("Review", func(t *testing.T) { testReview(t, open) })           // review.go
	t.Run("Evidence", func(t *testing.T) { testEvidence(t, open) })       // evidence.go
	t.Run("Limits", func(t *testing.T) { testLimits(t, open) })           // quota.go

	t.Run("PendingEvidence", func(t *testing.T) { testPendingEvidence(t, open) }) // evidence_review.go
	t.Run("Restore", func(t *testing.T) { testRestore(t, open) })                 // restore.go
	t.Run("StartLoader", func(t *testing.T) { testStartLoader(t, open) })         // start.go
	t.Run("ForeignParts", func(t *testing.T) { testForeignParts(t, open) })       // parts.go
	t.Run("Webhooks", func(t *testing.T) { testWebhooks(t, open) })               // webhooks.go
	t.Run("PrunePeriods", func(t *testing.T) { testPrunePeriods(t, open) })       // retention.go
	t.Run("Groups", func(t *testing.T) { testGroups(t, open) })                   // groups.go
}

var ctx = context.Background()

// t0 has a sub-millisecond part and a non-UTC zone, both of which a store
// drops.
var t0 = time.Date(2026, 11, 30, 9, 15, 30, 123_456_789, time.FixedZone("UTC+8", 8*3600))

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func mustNormalize(t *testing.T, n interface{ Normalize() error }) {
	t.Helper()
	if err := n.Normalize(); err != nil {
		t.Fatalf("Normalize: %v", err)
	}
}

func testBoards(t *testing.T, open func(*testing.T) podium.Store) {
	full := podium.Board{
		ID:    "ms:expert",
		Title: "Expert, standard mode, time",
		Keys:  []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}, {Name: "bbbv", Order: podium.Desc}},
		Mode:  podium.Best, Reset: podium.Reset{Every: podium.Weekly, TZ: "Asia/Shanghai"},
		Public: true, Meta: json.RawMessage(`{"game": "minesweeper", "n": [1, 2]}`),
		CreatedAt: t0, UpdatedAt: at(1500),
		RankStyle:   podium.RankShared, // rankstyle.go: kept in the board's document
		KeepPeriods: 12,                // retention.go: kept in the board's document
		PeriodsFrom: "2026-W40",        // retention.go: likewise
	}
	plain := podium.Board{ID: "points", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Sum, CreatedAt: at(-1), UpdatedAt: at(-1)}

	t.Run("Empty", func(t *testing.T) {
		bs, err := open(t).Boards(ctx)
		if err != nil || len(bs) != 0 {
			t.Fatalf("Boards of an empty store = %v, %v; want none", bs, err)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		for _, b := range []podium.Board{full, plain} {
			mustNormalize(t, &b)
			if err := s.PutBoard(ctx, &b); err != nil {
				t.Fatalf("PutBoard(%s): %v", b.ID, err)
			}
		}
		got := boards(t, s)
		if len(got) != 2 {
			t.Fatalf("Boards returned %d boards, want 2: %+v", len(got), got)
		}
		wantFull, wantPlain := full, plain
		mustNormalize(t, &wantFull)
		mustNormalize(t, &wantPlain)
		checkBoard(t, got[0], wantFull)
		checkBoard(t, got[1], wantPlain)
	})
	t.Run("Replace", func(t *testing.T) {
		s := open(t)
		b := full
		mustNormalize(t, &b)
		if err := s.PutBoard(ctx, &b); err != nil {
			t.Fatal(err)
		}
		b2 := b
		b2.Title, b2.Public, b2.Meta, b2.UpdatedAt = "Renamed", false, json.RawMessage(`{}`), at(90_000)
		b2.Keys = []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}}
		b2.Reset = podium.Reset{Every: podium.Monthly, TZ: "UTC"}
		if err := s.PutBoard(ctx, &b2); err != nil {
			t.Fatal(err)
		}
		got := boards(t, s)
		if len(got) != 1 {
			t.Fatalf("after replacing, Boards returned %d boards, want 1", len(got))
		}
		checkBoard(t, got[0], b2)
	})
}

func boards(t *testing.T, s podium.Store) []podium.Board {
	t.Helper()
	bs, err := s.Boards(ctx)
	if err != nil {
		t.Fatalf("Boards: %v", err)
	}
	slices.SortFunc(bs, func(a, b podium.Board) int { return strings.Compare(a.ID, b.ID) })
	return bs
}

func checkBoard(t *testing.T, got, want podium.Board) {
	t.Helper()
	checkTime(t, "board "+want.ID+" CreatedAt", got.CreatedAt, want.CreatedAt)
	checkTime(t, "board "+want.ID+" UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	checkMeta(t, "board "+want.ID, got.Meta, want.Meta)
	// Gen is the store's to assign (RunShared checks it).
	got.CreatedAt, got.UpdatedAt, got.Meta, got.Gen = time.Time{}, time.Time{}, nil, 0
	want.CreatedAt, want.UpdatedAt, want.Meta, want.Gen = time.Time{}, time.Time{}, nil, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("board read back as\n%+v\nwant\n%+v", got, want)
	}
}

// checkTime checks that got is want truncated to the millisecond.
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if w := want.Truncate(time.Millisecond); !got.Equal(w) {
		t.Errorf("%s = %v, want %v", what, got, w)
	}
}

// checkMeta checks that got is want, with absent, null and {} all read
// back as {}.
func checkMeta(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	w := want
	if len(w) == 0 || string(w) == "null" {
		w = json.RawMessage("{}")
	}
	if !bytes.Equal(got, w) {
		t.Errorf("%s meta = %q, want %q", what, got, w)
	}
}

func testDeleteBoard(t *testing.T, open func(*testing.T) podium.Store) {
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		gone, kept := putBoard(t, s, "gone", podium.Daily, 1), putBoard(t, s, "kept", podium.Never, 1)
		commit(t, s, &podium.Batch{
			Submissions: []podium.Submission{sub(gone, 1, "2026-11-29", "a", 5), sub(gone, 2, "2026-11-30", "a", 6), sub(kept, 1, "all", "a", 7)},
			Upserts:     []podium.Entry{entry(gone, 1, "2026-11-29", "a", 5), entry(gone, 2, "2026-11-30", "a", 6), entry(kept, 1, "all", "a", 7)},
		})
		if err := s.DeleteBoard(ctx, "gone"); err != nil {
			t.Fatalf("DeleteBoard: %v", err)
		}
		if bs := boards(t, s); len(bs) != 1 || bs[0].ID != "kept" {
			t.Errorf("after DeleteBoard(gone), Boards = %+v, want only kept", bs)
		}
		for _, p := range []string{"2026-11-29", "2026-11-30"} {
			if es := load(t, s, "gone", p); len(es) != 0 {
				t.Errorf("deleted board still has %d entries in %s", len(es), p)
			}
		}
		if ps := periods(t, s, "gone"); len(ps) != 0 {
			t.Errorf("deleted board still has periods %v", ps)
		}
		if subs := logOf(t, s, "gone"); len(subs) != 0 {
			t.Errorf("deleted board still has %d logged submissions", len(subs))
		}
		if seq := lastSeq(t, s, "gone"); seq != 0 {
			t.Errorf("deleted board: LastSeq = %d, want 0", seq)
		}
		checkEntries(t, load(t, s, "kept", "all"), []podium.Entry{entry(kept, 1, "all", "a", 7)})
		if subs := logOf(t, s, "kept"); len(subs) != 1 {
			t.Errorf("the other board lost its log: %d submissions, want 1", len(subs))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := open(t)
		putBoard(t, s, "other", podium.Never, 1)
		err := s.DeleteBoard(ctx, "missing")
		if code := podium.ErrorCode(err); code != podium.ECodeBoardNotFound {
			t.Fatalf("DeleteBoard(missing) = %v (code %s), want %s", err, code, podium.ECodeBoardNotFound)
		}
		if bs := boards(t, s); len(bs) != 1 {
			t.Errorf("a failed DeleteBoard changed the boards: %+v", bs)
		}
	})
}

func testPlayers(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	if ps, err := s.Players(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Players of an empty store = %v, %v; want none", ps, err)
	}
	alice := podium.Player{ID: "alice", Name: "Alice", Meta: json.RawMessage(`{"country":"NZ"}`), UpdatedAt: t0}
	bob := podium.Player{ID: "bøb 🎮", Name: "", Hidden: true, UpdatedAt: at(5)}
	for _, p := range []podium.Player{alice, bob} {
		mustNormalize(t, &p)
		if err := s.PutPlayer(ctx, &p); err != nil {
			t.Fatalf("PutPlayer(%s): %v", p.ID, err)
		}
	}
	alice2 := alice
	alice2.Name, alice2.Hidden, alice2.Meta, alice2.UpdatedAt = "Alice Liddell", true, nil, at(60_000)
	if err := s.PutPlayer(ctx, &alice2); err != nil {
		t.Fatalf("PutPlayer (replace): %v", err)
	}
	ps, err := s.Players(ctx)
	if err != nil {
		t.Fatalf("Players: %v", err)
	}
	slices.SortFunc(ps, func(a, b podium.Player) int { return strings.Compare(a.ID, b.ID) })
	want := []podium.Player{alice2, bob}
	if len(ps) != len(want) {
		t.Fatalf("Players returned %d players, want %d: %+v", len(ps), len(want), ps)
	}
	for i, w := range want {
		g := ps[i]
		checkTime(t, "player "+w.ID+" UpdatedAt", g.UpdatedAt, w.UpdatedAt)
		checkMeta(t, "player "+w.ID, g.Meta, w.Meta)
		if g.ID != w.ID || g.Name != w.Name || g.Hidden != w.Hidden {
			t.Errorf("player read back as %+v, want %+v", g, w)
		}
	}
}

func testKeys(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	admin := podium.APIKey{ID: "k1", Name: "ops", Scopes: []string{podium.ScopeAdmin}, Hash: strings.Repeat("ab", 32), CreatedAt: t0}
	game := podium.APIKey{ID: "k2", Name: "game-server", Scopes: []string{podium.ScopeSubmit, podium.ScopeRead}, Boards: []string{"ms:", "ctf:"}, Hash: strings.Repeat("cd", 32), CreatedAt: at(7)}
	for _, k := range []podium.APIKey{admin, game} {
		mustNormalize(t, &k)
		if err := s.PutKey(ctx, &k); err != nil {
			t.Fatalf("PutKey(%s): %v", k.ID, err)
		}
	}
	keys := func() []podium.APIKey {
		t.Helper()
		ks, err := s.Keys(ctx)
		if err != nil {
			t.Fatalf("Keys: %v", err)
		}
		slices.SortFunc(ks, func(a, b podium.APIKey) int { return strings.Compare(a.ID, b.ID) })
		return ks
	}
	ks := keys()
	mustNormalize(t, &admin)
	mustNormalize(t, &game)
	if len(ks) != 2 {
		t.Fatalf("Keys returned %d keys, want 2", len(ks))
	}
	for i, w := range []podium.APIKey{admin, game} {
		g := ks[i]
		checkTime(t, "key "+w.ID+" CreatedAt", g.CreatedAt, w.CreatedAt)
		g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
		if len(g.Boards) == 0 && len(w.Boards) == 0 {
			g.Boards, w.Boards = nil, nil // empty and nil both mean every board
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("key read back as %+v, want %+v (hash must be kept)", g, w)
		}
	}

	if err := s.DeleteKey(ctx, "k1"); err != nil {
		t.Fatalf("DeleteKey(k1): %v", err)
	}
	if ks := keys(); len(ks) != 1 || ks[0].ID != "k2" {
		t.Errorf("after DeleteKey(k1), Keys = %+v, want only k2", ks)
	}
	err := s.DeleteKey(ctx, "k1")
	if code := podium.ErrorCode(err); code != podium.ECodeNotFound {
		t.Errorf("DeleteKey of a deleted key = %v (code %s), want %s", err, code, podium.ECodeNotFound)
	}
}

// putBoard stores a board with nkeys asc keys and returns it.
func putBoard(t *testing.T, s podium.Store, id string, every podium.Every, nkeys int) *podium.Board {
	t.Helper()
	b := &podium.Board{ID: id, Reset: podium.Reset{Every: every}, CreatedAt: t0, UpdatedAt: t0}
	for i := range nkeys {
		b.Keys = append(b.Keys, podium.KeyDef{Name: fmt.Sprintf("k%d", i+1), Order: podium.Asc})
	}
	mustNormalize(t, b)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatalf("PutBoard(%s): %v", id, err)
	}
	return b
}

func sub(b *podium.Board, seq uint64, period, player string, keys ...int64) podium.Submission {
	return podium.Submission{Seq: seq, Board: b.ID, Period: period, Player: player, Keys: keys, At: at(int64(seq))}
}

func entry(b *podium.Board, seq uint64, period, player string, keys ...int64) podium.Entry {
	return podium.Entry{Board: b.ID, Period: period, Player: player, Keys: keys, At: at(int64(seq)), Seq: seq}
}

func commit(t *testing.T, s podium.Store, b *podium.Batch) {
	t.Helper()
	if err := s.Commit(ctx, b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// feedRows, tourneyRows and reviewRows are the parts of a Batch that
// carry a feature's rows, made by s (podium.Part).
func feedRows(t *testing.T, s podium.Store, evs ...podium.FeedEvent) []podium.Part {
	t.Helper()
	return []podium.Part{feedStore(t, s).FeedPart(evs)}
}

func tourneyRows(t *testing.T, s podium.Store, tb *podium.TourneyBatch) []podium.Part {
	t.Helper()
	return []podium.Part{tourneyStore(t, s).TourneyPart(tb)}
}

func reviewRows(t *testing.T, s podium.Store, items []podium.ReviewItem, decisions []podium.ReviewDecision) []podium.Part {
	t.Helper()
	return []podium.Part{reviewStore(t, s).ReviewPart(items, decisions)}
}

// load returns copies of the entries of one board and period, sorted by
// player.
func load(t *testing.T, s podium.Store, board, period string) []podium.Entry {
	t.Helper()
	var out []podium.Entry
	err := s.LoadEntries(ctx, board, period, func(e *podium.Entry) error {
		c := *e
		c.Keys = slices.Clone(e.Keys)
		c.Meta = bytes.Clone(e.Meta)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatalf("LoadEntries(%s, %s): %v", board, period, err)
	}
	slices.SortFunc(out, func(a, b podium.Entry) int { return strings.Compare(a.Player, b.Player) })
	return out
}

func logOf(t *testing.T, s podium.Store, board string) []podium.Submission {
	t.Helper()
	var out []podium.Submission
	err := s.Log(ctx, board, 0, func(sub *podium.Submission) error {
		c := *sub
		c.Keys = slices.Clone(sub.Keys)
		c.Meta = bytes.Clone(sub.Meta)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Log(%s): %v", board, err)
	}
	return out
}

func lastSeq(t *testing.T, s podium.Store, board string) uint64 {
	t.Helper()
	seq, err := s.LastSeq(ctx, board)
	if err != nil {
		t.Fatalf("LastSeq(%s): %v", board, err)
	}
	return seq
}

func periods(t *testing.T, s podium.Store, board string) []podium.PeriodCount {
	t.Helper()
	ps, err := s.Periods(ctx, board)
	if err != nil {
		t.Fatalf("Periods(%s): %v", board, err)
	}
	return ps
}

// checkEntries compares entries sorted by player with want (any order).
func checkEntries(t *testing.T, got, want []podium.Entry) {
	t.Helper()
	want = slices.Clone(want)
	slices.SortFunc(want, func(a, b podium.Entry) int { return strings.Compare(a.Player, b.Player) })
	if len(got) != len(want) {
		t.Errorf("got %d entries, want %d:\n got %v\nwant %v", len(got), len(want), players(got), players(want))
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		what := fmt.Sprintf("entry %s/%s/%s", w.Board, w.Period, w.Player)
		checkTime(t, what+" At", g.At, w.At)
		checkMeta(t, what, g.Meta, w.Meta)
		if g.Board != w.Board || g.Period != w.Period || g.Player != w.Player || g.Seq != w.Seq || !slices.Equal(g.Keys, w.Keys) {
			t.Errorf("%s read back as {%s %s %s keys=%v seq=%d}, want keys=%v seq=%d", what, g.Board, g.Period, g.Player, g.Keys, g.Seq, w.Keys, w.Seq)
		}
		if !podium.EqualResults(g.Results, w.Results) {
			t.Errorf("%s results read back as %v, want %v", what, g.Results, w.Results)
		}
	}
}

func players(es []podium.Entry) []string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Player)
	}
	return ps
}

// extremes are key values a store must keep exactly.
var extremes = []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 53, -(1 << 53) - 1}
