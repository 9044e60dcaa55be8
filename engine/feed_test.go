package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

func (e *env) feed(board string) []feed.Item {
	e.t.Helper()
	items, err := feedOf(e.eng).Feed(context.Background(), feed.Read{Board: board, Limit: feedOf(e.eng).Cap()})
	if err != nil {
		e.t.Fatalf("Feed(%q): %v", board, err)
	}
	return items
}

// feedOf is the engine's feed module (feed/).
func feedOf(e *engine.Engine) *feed.Module {
	for _, m := range e.Modules() {
		if f, ok := m.(*feed.Module); ok {
			return f
		}
	}
	return nil
}

// feedCap is the standard modules over c's store with the feed keeping
// limit events a board.
func feedCap(c *engine.Config, limit int) []engine.Module {
	return modules.With(modules.Config{Store: c.Store, Logger: c.Logger, Feed: feed.Config{Cap: limit}})
}

// feedLines renders items oldest first, one line each.
func feedLines(items []feed.Item) []string {
	out := []string{}
	for i := len(items) - 1; i >= 0; i-- {
		it := &items[i]
		s := fmt.Sprintf("%s %s %s(%s) %v old=%v", it.ID(), it.Period, it.Player, it.Name, it.Keys, it.Old)
		if it.Other != "" {
			s += fmt.Sprintf(" from=%s(%s)", it.Other, it.OtherName)
		}
		out = append(out, s)
	}
	return out
}

func wantLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestFeedPersonalBestAndLeader(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("exp", podium.Best, podium.Never, asc("ms"))
	if _, err := e.eng.PutPlayer(ctx, &podium.Player{ID: "bob", Name: "Bob"}); err != nil {
		t.Fatal(err)
	}
	e.submit("exp", "alice", 100) // first entry: PB with no old value, and #1 of an empty period
	e.submit("exp", "alice", 120) // worse: nothing
	e.submit("exp", "bob", 90)    // PB, and #1 taken from alice
	e.submit("exp", "carol", 95)  // PB, not #1
	e.submit("exp", "alice", 80)  // PB, #1 back
	e.submit("exp", "alice", 80)  // equal: not an improvement
	wantLines(t, "feed", feedLines(e.feed("exp")), []string{
		"exp/1/personal_best all alice(alice) [100] old=[]",
		"exp/1/new_leader all alice(alice) [100] old=[]",
		"exp/3/personal_best all bob(Bob) [90] old=[]",
		"exp/3/new_leader all bob(Bob) [90] old=[100] from=alice(alice)",
		"exp/4/personal_best all carol(carol) [95] old=[]",
		"exp/5/personal_best all alice(alice) [80] old=[100]",
		"exp/5/new_leader all alice(alice) [80] old=[90] from=bob(Bob)",
	})
	items := e.feed("exp")
	if items[len(items)-1].Old != nil {
		t.Errorf("a first personal best has old %v, want nil (null)", items[len(items)-1].Old)
	}
	// A hidden player makes no event and does not count as #1.
	if _, err := e.eng.PutPlayer(ctx, &podium.Player{ID: "mallory", Hidden: true}); err != nil {
		t.Fatal(err)
	}
	e.submit("exp", "mallory", 1)
	e.submit("exp", "carol", 70) // #1 among visible players, ahead of alice's 80
	got := feedLines(e.feed("exp"))
	wantLines(t, "after a hidden player and a new #1", got[len(got)-2:], []string{
		"exp/8/personal_best all carol(carol) [70] old=[95]",
		"exp/8/new_leader all carol(carol) [70] old=[80] from=alice(alice)",
	})
	// Hiding a player removes their events from what readers get.
	if _, err := e.eng.PutPlayer(ctx, &podium.Player{ID: "carol", Hidden: true}); err != nil {
		t.Fatal(err)
	}
	for _, it := range e.feed("") {
		if it.Player == "carol" {
			t.Fatalf("a hidden player's event is served: %s", it.ID())
		}
	}
}

// On latest and sum boards there are no personal bests; a new #1 is a
// submission that puts its player ahead of everyone else.
func TestFeedLatestAndSum(t *testing.T) {
	e := newEnv(t)
	e.board("lvl", podium.Latest, podium.Never, desc("level"))
	e.submit("lvl", "a", 5)
	e.submit("lvl", "b", 3)
	e.submit("lvl", "a", 1) // a drops below b: b is #1 without submitting, no event
	e.submit("lvl", "b", 4) // b stays #1: no event
	e.submit("lvl", "a", 9) // a is #1 again
	wantLines(t, "latest", feedLines(e.feed("lvl")), []string{
		"lvl/1/new_leader all a(a) [5] old=[]",
		"lvl/5/new_leader all a(a) [9] old=[4] from=b(b)",
	})
	e.board("pts", podium.Sum, podium.Never, desc("points"))
	e.submit("pts", "a", 10)
	e.submit("pts", "b", 7)
	e.submit("pts", "b", 7) // 14 > 10
	e.submit("pts", "a", 1)
	wantLines(t, "sum", feedLines(e.feed("pts")), []string{
		"pts/1/new_leader all a(a) [10] old=[]",
		"pts/3/new_leader all b(b) [14] old=[10] from=a(a)",
	})
}

// expectedFeed derives the feed events of a board's log by replaying it
// one submission at a time: the definition the engine's pipelined,
// grouped computation must match.
func expectedFeed(t *testing.T, st podium.Store, b *podium.Board, hidden map[string]bool) []string {
	t.Helper()
	type state struct {
		entries map[string]*podium.Entry
	}
	periods := map[string]*state{}
	orders := b.Orders()
	leader := func(s *state) *podium.Entry {
		var best *podium.Entry
		for _, en := range s.entries {
			if hidden[en.Player] {
				continue
			}
			if best == nil || podium.Compare(orders, en, best) < 0 {
				best = en
			}
		}
		return best
	}
	var out []string
	err := st.Log(context.Background(), b.ID, 0, func(sub *podium.Submission) error {
		s := periods[sub.Period]
		if s == nil {
			s = &state{entries: map[string]*podium.Entry{}}
			periods[sub.Period] = s
		}
		before := leader(s)
		if sub.Kind == podium.KindDelete {
			delete(s.entries, sub.Player)
			return nil
		}
		cur := s.entries[sub.Player]
		c := *sub
		c.Keys = slices.Clone(sub.Keys)
		next, changed, err := podium.Apply(b, cur, &c)
		if err != nil {
			return err
		}
		if !changed || hidden[sub.Player] {
			if changed {
				s.entries[sub.Player] = &next
			}
			return nil
		}
		if b.Mode == podium.Best {
			var old []int64
			if cur != nil {
				old = cur.Keys
			}
			out = append(out, fmt.Sprintf("%s/%d/personal_best %s %v %v", b.ID, sub.Seq, sub.Player, next.Keys, old))
		}
		s.entries[sub.Player] = &next
		if after := leader(s); after.Player == sub.Player && (before == nil || before.Player != sub.Player) {
			var old []int64
			from := ""
			if before != nil {
				old, from = before.Keys, before.Player
			}
			out = append(out, fmt.Sprintf("%s/%d/new_leader %s %v %v %s", b.ID, sub.Seq, sub.Player, next.Keys, old, from))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func storedFeed(t *testing.T, fs podium.FeedStore, board string) []string {
	t.Helper()
	evs, err := fs.Feed(context.Background(), podium.FeedQuery{Boards: []string{board}, Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(evs) - 1; i >= 0; i-- {
		ev := &evs[i]
		s := fmt.Sprintf("%s %s %v %v", ev.ID(), ev.Player, ev.Keys, ev.Old)
		if ev.Kind == podium.FeedNewLeader {
			s += " " + ev.Other
		}
		out = append(out, s)
	}
	return out
}

// Many writers race on a best board and a latest board, with deletes:
// groups are computed while earlier ones are still being committed, so the
// #1 must be tracked through the pending overlay. The stored events must
// be exactly those of replaying the log one submission at a time. The
// feed's order puts equal times in seq order, so the clock does not move.
func TestFeedMatchesSequentialReplay(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0))
	e := newEnv(t)
	ctx := context.Background()
	e.board("best", podium.Best, podium.Never, asc("ms"))
	e.board("last", podium.Latest, podium.Never, desc("level"), asc("ms"))
	var wg sync.WaitGroup
	for w := range 16 {
		seedW := r.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seedW, uint64(w)))
			for range 150 {
				p := fmt.Sprintf("p%d", r.IntN(12))
				var scores []engine.Score
				for range 1 + r.IntN(3) {
					if r.IntN(2) == 0 {
						scores = append(scores, engine.Score{Board: "best", Player: p, Keys: []int64{int64(100 + r.IntN(900))}})
					} else {
						scores = append(scores, engine.Score{Board: "last", Player: p, Keys: []int64{int64(r.IntN(6)), int64(r.IntN(50))}})
					}
				}
				if _, err := e.eng.Submit(ctx, scores, false, nil); err != nil {
					t.Error(err)
					return
				}
				if r.IntN(40) == 0 {
					b := []string{"best", "last"}[r.IntN(2)]
					if err := e.eng.DeleteEntry(ctx, b, "current", p); err != nil && podium.ErrorCode(err) != podium.ECodeEntryNotFound {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	fs := podium.FeedStore(e.store)
	for _, id := range []string{"best", "last"} {
		bi, err := e.eng.Board(id)
		if err != nil {
			t.Fatal(err)
		}
		want := expectedFeed(t, e.store, &bi.Board, nil)
		got := storedFeed(t, fs, id)
		if len(want) == 0 {
			t.Fatalf("%s: no events expected: the test writes nothing", id)
		}
		// The store keeps at least the newest FeedCap events of a board
		// (older ones are trimmed in batches, later): what it holds must be
		// the newest part of the replay, and no less than FeedCap of it.
		if n := feedOf(e.eng).Cap(); len(want) > n {
			if len(got) < n || len(got) > len(want) {
				t.Fatalf("%s: %d events stored of %d, want %d to %d", id, len(got), len(want), n, len(want))
			}
			want = want[len(want)-len(got):]
		}
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if trimSpace(g) != trimSpace(w) {
				t.Fatalf("%s: event %d of %d/%d:\n got %q\nwant %q", id, i, len(got), len(want), g, w)
			}
		}
	}
}

func trimSpace(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func feedCount(t *testing.T, fs podium.FeedStore) int {
	t.Helper()
	evs, err := fs.Feed(context.Background(), podium.FeedQuery{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// Start-up replay of a log tail, a reload of the indexes, podium rebuild
// and check read the log without emitting feed events.
func TestFeedNotFromReplayRebuildOrCheck(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("exp", podium.Best, podium.Never, asc("ms"))
	e.submit("exp", "alice", 100)
	e.submit("exp", "bob", 90)
	want := storedFeed(t, e.store, "exp")
	if len(want) != 4 {
		t.Fatalf("setup: %d events, want 4", len(want))
	}
	// A log tail behind the entries table, as a crash leaves it: the
	// next start replays it into the indexes.
	e.close()
	e.open()
	e.eng.Close()
	tail := []podium.Submission{
		{Seq: 3, Board: "exp", Period: "all", Player: "carol", Keys: []int64{10}, At: e.clock.Now()},
		{Seq: 4, Board: "exp", Period: "all", Player: "alice", Keys: []int64{5}, At: e.clock.Now()},
	}
	if err := e.store.Commit(ctx, &podium.Batch{Submissions: tail}); err != nil {
		t.Fatal(err)
	}
	e.store.Close()
	e.eng = nil
	e.open()
	if top := e.top("exp", ""); len(top) != 3 || top[0] != "1:alice:[5]" {
		t.Fatalf("the log tail was not replayed: %v", top)
	}
	wantLines(t, "feed after start-up replay", storedFeed(t, e.store, "exp"), want)
	if err := e.eng.Checker().Reload(ctx); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "feed after a reload", storedFeed(t, e.store, "exp"), want)
	if diffs, err := engine.CheckStore(ctx, e.store); err != nil || len(diffs) != 0 {
		t.Fatalf("CheckStore: %v %v", diffs, err)
	}
	if diffs, err := e.eng.Checker().Indexes(ctx); err != nil || len(diffs) != 0 {
		t.Fatalf("CheckIndexes: %v %v", diffs, err)
	}
	e.close()
	e.open()
	e.eng.Close()
	if _, err := engine.RebuildStore(ctx, e.store); err != nil {
		t.Fatal(err)
	}
	e.store.Close()
	e.eng = nil
	e.open()
	wantLines(t, "feed after check and rebuild", storedFeed(t, e.store, "exp"), want)
	// The next submission is computed against the replayed state: dave
	// takes #1 from alice's replayed 5.
	e.submit("exp", "dave", 4)
	got := storedFeed(t, e.store, "exp")
	wantLines(t, "after a new #1", got[len(got)-1:], []string{"exp/5/new_leader dave [4] [5] alice"})
}

// The feed keeps the newest FeedCap events per board: older ones are
// pruned off the write path.
func TestFeedCapPrunes(t *testing.T) {
	e := newEnv(t)
	e.eng.Close()
	e.store.Close()
	e.eng = nil
	reg := prometheus.NewRegistry()
	e.openWith(func(c *engine.Config) { c.Modules = feedCap(c, 5); c.Registerer = reg })
	e.board("exp", podium.Best, podium.Never, asc("ms"))
	e.board("other", podium.Best, podium.Never, asc("ms"))
	for i := range 12 {
		e.submit("exp", "alice", int64(1000-i)) // a personal best and alice stays #1
	}
	e.submit("other", "bob", 1)
	eventually(t, 10*time.Second, "pruned to the cap", func() bool { return feedCount(t, e.store) == 5+2 })
	got := storedFeed(t, e.store, "exp")
	if len(got) != 5 || got[0] != "exp/8/personal_best alice [993] [994]" {
		t.Fatalf("after pruning, exp's feed = %q; want its 5 newest events", got)
	}
	// The counter moves just after the rows are gone.
	eventually(t, 5*time.Second, "podium_feed_pruned_total reaches 8", func() bool { return gathered(t, reg, "podium_feed_pruned_total") == 8 })
	if n := gathered(t, reg, "podium_feed_events_total"); n != 15 {
		t.Errorf("podium_feed_events_total = %v, want 15", n)
	}
	if _, err := feedOf(e.eng).Feed(context.Background(), feed.Read{Limit: 6}); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("Feed(limit above the cap) = %v, want %s", err, podium.ECodeInvalid)
	}
}

func TestAppendFeed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("cup", podium.Best, podium.Never, desc("pts"))
	e.submit("cup", "alice", 10)
	ev := podium.FeedEvent{Board: "cup", Kind: podium.FeedTournamentSettled, Player: "alice", Keys: []int64{10},
		Data: json.RawMessage(`{"tournament":"cup","points":[{"player":"alice","rank":1,"points":1000}]}`)}
	for range 2 { // a settlement that runs twice stores one event
		if err := feedOf(e.eng).AppendFeed(ctx, []podium.FeedEvent{ev}); err != nil {
			t.Fatal(err)
		}
	}
	items := e.feed("cup")
	if len(items) != 3 || items[0].ID() != "cup/1/tournament_settled" || string(items[0].Data) != string(ev.Data) || items[0].Period != "all" {
		t.Fatalf("feed after AppendFeed twice = %q", feedLines(items))
	}
	for _, c := range []struct {
		ev   podium.FeedEvent
		code string
	}{
		{podium.FeedEvent{Board: "nope", Kind: podium.FeedTournamentSettled}, podium.ECodeBoardNotFound},
		{podium.FeedEvent{Board: "cup", Kind: podium.FeedPersonalBest}, podium.ECodeInvalid},
		{podium.FeedEvent{Board: "cup", Kind: podium.FeedTournamentSettled, Data: json.RawMessage(`[1]`)}, podium.ECodeInvalid},
		{podium.FeedEvent{Board: "cup", Kind: podium.FeedTournamentSettled, Player: "bad\x01player"}, podium.ECodeInvalid},
	} {
		if err := feedOf(e.eng).AppendFeed(ctx, []podium.FeedEvent{c.ev}); podium.ErrorCode(err) != c.code {
			t.Errorf("AppendFeed(%+v) = %v, want %s", c.ev, err, c.code)
		}
	}
	if n := len(e.feed("cup")); n != 3 {
		t.Errorf("refused appends stored something: %d events", n)
	}
}

// openWith is env.open with a changed engine configuration.
func (e *env) openWith(change func(*engine.Config)) {
	e.t.Helper()
	st, err := sqlite.Open(filepath.Join(e.dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = st
	cfg := engine.Config{Store: st, Now: e.clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	change(&cfg)
	e.eng = modules.Engine(cfg)
	if err := e.eng.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// gathered sums the counters named name in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
