package stream

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeBoard is one board of a fakeSource.
type fakeBoard struct {
	def    podium.Board
	gen    uint64
	seq    uint64
	scores map[string]int64
}

// fakeSource is an in-memory Source: boards whose players have one
// descending score each.
type fakeSource struct {
	mu     sync.Mutex
	boards map[string]*fakeBoard
	gens   uint64
	reads  int
}

func newFakeSource() *fakeSource { return &fakeSource{boards: map[string]*fakeBoard{}} }

// put creates or recreates a board (a new generation, no entries).
func (f *fakeSource) put(id string, public bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gens++
	f.boards[id] = &fakeBoard{def: podium.Board{ID: id, Title: id, Public: public,
		Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}}, gen: f.gens, scores: map[string]int64{}}
}

// setPublic changes a board's visibility, keeping its generation.
func (f *fakeSource) setPublic(id string, public bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.boards[id].def.Public = public
}

func (f *fakeSource) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.boards, id)
}

// score sets a player's score and moves the board's seq.
func (f *fakeSource) score(id, player string, v int64) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.boards[id]
	if b == nil {
		return 0
	}
	b.seq++
	b.scores[player] = v
	return b.seq
}

func (f *fakeSource) View(_ context.Context, board string, limit int) (View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	b := f.boards[board]
	if b == nil {
		return View{}, podium.Errorf(podium.ECodeBoardNotFound, "board %q does not exist", board)
	}
	players := make([]string, 0, len(b.scores))
	for p := range b.scores {
		players = append(players, p)
	}
	slices.SortFunc(players, func(x, y string) int {
		if b.scores[x] != b.scores[y] {
			return int(b.scores[y] - b.scores[x])
		}
		if x < y {
			return -1
		}
		return 1
	})
	v := View{Board: board, Title: b.def.Title, Keys: b.def.Keys, Public: b.def.Public, Generation: b.gen,
		Period: "all", Seq: b.seq, Total: len(players)}
	for i, p := range players {
		if i == limit {
			break
		}
		v.Entries = append(v.Entries, Entry{Rank: i + 1, Player: p, Name: p, Keys: []int64{b.scores[p]},
			AtText: "2026-11-30T10:00:00.000Z", Meta: []byte("{}")})
	}
	return v, nil
}

// seed returns the test's random seed: SEED from the environment, or a new
// one, printed so that a failure can be replayed.
func seed(t *testing.T) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if env := os.Getenv("SEED"); env != "" {
		v, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", env, err)
		}
		s = v
	}
	t.Logf("SEED=%d", s)
	return s
}

func newRand(s uint64) *rand.Rand { return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15)) }

// newTestHub returns a hub on a fake clock whose ticks the test runs.
func newTestHub(t *testing.T, src Source, cfg Config) (*Hub, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	cfg.Now = clk.Now
	cfg.ManualTick = true
	h := New(src, cfg)
	t.Cleanup(h.Close)
	return h, clk
}

// drain returns the events queued for a connection now, without waiting.
func drain(c *Conn) []*Event {
	var out []*Event
	for {
		_, ev, ok := c.Next(0, nil)
		if !ok || ev == nil {
			return out
		}
		out = append(out, ev)
	}
}

func describe(evs []*Event) string {
	s := ""
	for _, ev := range evs {
		s += fmt.Sprintf("%s %s\n", ev.Type, ev.JSON)
	}
	return s
}
