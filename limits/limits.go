// Package limits is the module that bounds what a player may submit (issue
// 9, sections 2 and 3): a board's key bounds and its per-player quota of
// submissions per window. It registers with the engine's write path as a
// Validator (bounds), a Preparer and a Gate (quotas), and keeps its counts
// right across failed commits (Forgetter) and other nodes' writes
// (Replayer). The counts of a board are kept in its slot, so they go with
// the board when it is deleted or reloaded.
//
// A board's quota is counted from its log: the number of a player's score
// submissions in the current window (podium.QuotaWindow). The module keeps
// the counts it has read, loads a player's count from the store on first
// use in a window, and adds one when the writer logs an admitted score, so
// the count and the submission go into the same group commit and no
// interleaving of requests can pass the cap.
//
// Why a count read once and then kept in memory is exact:
//   - Every score the writer computes for a board with a quota passes
//     Admit, which loads the player's count before it is incremented. So
//     a (window, player) that is not loaded has no submission in a group
//     that is computed but not yet applied, and the store (read up to the
//     board's applied seq) holds all there is.
//   - The counts are dropped whenever a group fails to commit (Forget: on
//     the pipelined writer after the failure, in shared mode at once),
//     after which nothing is pending, so a count never includes a
//     submission that was not stored.
//   - In shared mode (PostgreSQL, several nodes) the writer computes only
//     after it has locked the board's head row and replayed the log up to
//     that head: Replayed adds the other nodes' submissions to the loaded
//     counts, and a count loaded under the lock is read up to the head,
//     which no other node can move until the lock is released.
//
// Every hook runs on the engine's writer goroutine (or in Start, before it
// runs): no lock guards the counts.
package limits

import (
	"context"
	"log/slog"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Store is what the module reads: the submissions counted against a quota.
type Store interface {
	// CountSubmissions counts, for each of players, the score submissions
	// on board in period with seq <= upTo (and, when since is not zero,
	// made in [since, until)).
	CountSubmissions(ctx context.Context, board, period string, players []string, upTo uint64, since, until time.Time) (map[string]int, error)
}

// Module enforces key bounds and quotas.
type Module struct {
	store Store
	log   *slog.Logger
	gen   uint64 // counts of an older generation are forgotten
}

// New returns the module, reading counts from store.
func New(store Store, log *slog.Logger) *Module {
	if log == nil {
		log = slog.Default()
	}
	return &Module{store: store, log: log}
}

var (
	_ engine.Validator = (*Module)(nil)
	_ engine.Preparer  = (*Module)(nil)
	_ engine.Gate      = (*Module)(nil)
	_ engine.Forgetter = (*Module)(nil)
	_ engine.Replayer  = (*Module)(nil)
)

// Name implements engine.Module.
func (m *Module) Name() string { return "limits" }

// Validate refuses keys outside the board's bounds.
func (m *Module) Validate(def *podium.Board, keys []int64) error {
	return def.CheckBounds(keys)
}

// counts holds the quota counts of the windows a board's writer has seen,
// at most two (the current one and the one before it, in case the clock
// steps back over a boundary).
type counts struct {
	gen     uint64
	windows map[string]map[string]int // window id -> player -> submissions
}

// window returns the counts of window id, making them if needed and
// forgetting older windows beyond two.
func (q *counts) window(id string) map[string]int {
	if c, ok := q.windows[id]; ok {
		return c
	}
	if q.windows == nil {
		q.windows = map[string]map[string]int{}
	}
	for len(q.windows) >= 2 {
		oldest := ""
		for w := range q.windows {
			if oldest == "" || w < oldest {
				oldest = w
			}
		}
		delete(q.windows, oldest)
	}
	c := map[string]int{}
	q.windows[id] = c
	return c
}

// of returns the counts kept with a board, nil if it has none (of this
// generation).
func (m *Module) of(bs *engine.BoardState) *counts {
	q, _ := bs.Slot(m).(*counts)
	if q == nil || q.gen != m.gen {
		return nil
	}
	return q
}

// make returns the counts kept with a board, making them if needed.
func (m *Module) make(bs *engine.BoardState) *counts {
	q := m.of(bs)
	if q == nil {
		q = &counts{gen: m.gen}
		bs.SetSlot(m, q)
	}
	return q
}

// Forget drops every board's counts: they are loaded again from the store
// on next use. Called with nothing pending (after a failed commit).
func (m *Module) Forget() {
	m.gen++
}

// Admit refuses a score of a player over its board's quota with a
// *podium.QuotaError.
func (m *Module) Admit(c *engine.Candidate) error {
	def := c.Def
	if def.Quota == nil {
		return nil
	}
	w := podium.QuotaWindow(def, c.Now)
	cs := m.make(c.Board).window(w.ID)
	n, ok := cs[c.Player]
	if !ok {
		if err := m.load(c.Board, def, w, c.Period, cs, []string{c.Player}); err != nil {
			return podium.Errorf(podium.ECodeUnavailable, "could not count the submissions of player %q against the quota of board %q; nothing was applied, retry shortly", c.Player, def.ID)
		}
		n = cs[c.Player]
	}
	if n >= def.Quota.Max {
		what := "period " + w.ID
		if c.Period == podium.PeriodAll {
			what = "day " + w.ID + " (" + def.Reset.TZ + ")"
		}
		end := w.End.UTC()
		return &podium.QuotaError{
			Err: podium.Errorf(podium.ECodeQuotaExceeded, "player %q has used the %d submissions that board %q allows per player in %s; the quota resets at %s",
				c.Player, def.Quota.Max, def.ID, what, end.Format(time.RFC3339)),
			ResetsAt: end, RetryAfter: w.End.Sub(c.Now), Max: def.Quota.Max, Window: w.End.Sub(w.Start),
		}
	}
	return nil
}

// Logged counts an admitted score in the group that logs it.
func (m *Module) Logged(c *engine.Candidate) {
	if c.Def.Quota == nil {
		return
	}
	w := podium.QuotaWindow(c.Def, c.Now)
	m.make(c.Board).window(w.ID)[c.Player]++
}

// load reads the counts of players in window w from the store, up to the
// board's applied seq, into cs.
func (m *Module) load(bs *engine.BoardState, def *podium.Board, w podium.Period, period string, cs map[string]int, players []string) error {
	upTo := bs.AppliedSeq()
	var since, until time.Time
	if period == podium.PeriodAll {
		since, until = w.Start, w.End
	}
	got, err := m.store.CountSubmissions(context.Background(), def.ID, period, players, upTo, since, until)
	if err != nil {
		m.log.Error("count submissions for a quota", "board", def.ID, "players", len(players), "err", err)
		return err
	}
	for _, p := range players {
		cs[p] = got[p]
	}
	return nil
}

// Prepare loads, in one read per board, the counts of the players that a
// group's scores need and that are not loaded yet, so that a group of new
// players costs one query instead of one each. A failure is left to
// Admit, which tries each player again and fails only its score.
func (m *Module) Prepare(now time.Time, scores []engine.Candidate) {
	type need struct {
		def     *podium.Board
		w       podium.Period
		period  string
		counts  map[string]int
		players []string
		seen    map[string]bool
	}
	var needs map[*engine.BoardState]*need
	for i := range scores {
		s := &scores[i]
		n := needs[s.Board]
		if n == nil {
			n = &need{} // def nil: no quota
			if def := s.Def; def.Quota != nil && def.Aggregate == nil {
				w := podium.QuotaWindow(def, now)
				n = &need{def: def, w: w, period: podium.PeriodAt(def.Reset, now).ID, counts: m.make(s.Board).window(w.ID), seen: map[string]bool{}}
			}
			if needs == nil {
				needs = map[*engine.BoardState]*need{}
			}
			needs[s.Board] = n
		}
		if n.def == nil {
			continue
		}
		if _, loaded := n.counts[s.Player]; loaded || n.seen[s.Player] {
			continue
		}
		n.seen[s.Player] = true
		n.players = append(n.players, s.Player)
	}
	for bs, n := range needs {
		if n.def != nil && len(n.players) > 0 {
			m.load(bs, n.def, n.w, n.period, n.counts, n.players)
		}
	}
}

// Replayed counts a submission another node logged in the loaded counts
// of its player, if they are loaded.
func (m *Module) Replayed(bs *engine.BoardState, def *podium.Board, s *podium.Submission) {
	q := m.of(bs)
	if def.Quota == nil || q == nil || q.windows == nil || s.Kind != podium.KindScore {
		return
	}
	w := podium.QuotaWindow(def, s.At)
	cs := q.windows[w.ID]
	if cs == nil || !podium.InQuotaWindow(def, w, s) {
		return
	}
	if _, loaded := cs[s.Player]; loaded {
		cs[s.Player]++
	}
}
