package engine

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
)

// Quotas and bounds on the write path (issue 9, sections 2 and 3).
//
// A board's quota is counted from its log: the number of a player's score
// submissions in the current window (podium.QuotaWindow). The writer keeps
// the counts it has read in quotaCounts, loads a player's count from the
// store on first use in a window, and adds one when it computes an
// accepted score, so the count and the submission go into the same group
// commit and no interleaving of requests can pass the cap.
//
// Why a count read once and then kept in memory is exact:
//   - Every score the writer computes for a board with a quota passes
//     quotaCheck, which loads the player's count before it is incremented.
//     So a (window, player) that is not loaded has no submission in a
//     group that is computed but not yet applied, and the store (read up
//     to the board's applied seq) holds all there is.
//   - The counts are dropped whenever a group fails to commit (recover on
//     the pipelined writer, sharedGroup in shared mode), after which
//     nothing is pending, so a count never includes a submission that was
//     not stored.
//   - In shared mode (PostgreSQL, several nodes) the writer computes only
//     after it has locked the board's head row and replayed the log up to
//     that head (syncLocked): catchUp adds the other nodes' submissions to
//     the loaded counts, and a count loaded under the lock is read up to
//     the head, which no other node can move until the lock is released.
//
// The counts are the writer's alone (and Start's, before the writer runs):
// no lock guards them.

// quotaCounts holds the counts of the windows a board's writer has seen,
// at most two (the current one and the one before it, in case the clock
// steps back over a boundary).
type quotaCounts struct {
	windows map[string]map[uint32]int // window id -> player -> submissions
}

// window returns the counts of window id, making them if needed and
// forgetting older windows beyond two.
func (q *quotaCounts) window(id string) map[uint32]int {
	if c, ok := q.windows[id]; ok {
		return c
	}
	if q.windows == nil {
		q.windows = map[string]map[uint32]int{}
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
	c := map[uint32]int{}
	q.windows[id] = c
	return c
}

// quotaForget drops every board's counts: they are loaded again from the
// store on next use. Called with nothing pending (after a failed commit).
func (e *Engine) quotaForget() {
	for _, bs := range e.boardStates() {
		bs.quota.windows = nil
	}
}

// quotaCheck refuses a score of player over its board's quota with a
// *podium.QuotaError. It returns the counts to increment once the score is
// accepted (nil for a board without a quota).
func (e *Engine) quotaCheck(bs *boardState, def *podium.Board, period, player string, pid uint32, now time.Time) (map[uint32]int, error) {
	if def.Quota == nil {
		return nil, nil
	}
	w := podium.QuotaWindow(def, now)
	counts := bs.quota.window(w.ID)
	n, ok := counts[pid]
	if !ok {
		if err := e.quotaLoad(bs, def, w, period, counts, []string{player}, []uint32{pid}); err != nil {
			return nil, podium.Errorf(podium.ECodeUnavailable, "could not count the submissions of player %q against the quota of board %q; nothing was applied, retry shortly", player, def.ID)
		}
		n = counts[pid]
	}
	if n >= def.Quota.Max {
		what := "period " + w.ID
		if period == podium.PeriodAll {
			what = "day " + w.ID + " (" + def.Reset.TZ + ")"
		}
		end := w.End.UTC()
		return nil, &podium.QuotaError{
			Err: podium.Errorf(podium.ECodeQuotaExceeded, "player %q has used the %d submissions that board %q allows per player in %s; the quota resets at %s",
				player, def.Quota.Max, def.ID, what, end.Format(time.RFC3339)),
			ResetsAt: end, RetryAfter: w.End.Sub(now), Max: def.Quota.Max, Window: w.End.Sub(w.Start),
		}
	}
	return counts, nil
}

// quotaLoad reads the counts of players (whose ids are pids) in window w
// from the store, up to the board's applied seq, into counts.
func (e *Engine) quotaLoad(bs *boardState, def *podium.Board, w podium.Period, period string, counts map[uint32]int, players []string, pids []uint32) error {
	bs.mu.RLock()
	upTo := bs.seq
	bs.mu.RUnlock()
	var since, until time.Time
	if period == podium.PeriodAll {
		since, until = w.Start, w.End
	}
	got, err := e.store.CountSubmissions(context.Background(), def.ID, period, players, upTo, since, until)
	if err != nil {
		e.log.Error("count submissions for a quota", "board", def.ID, "players", len(players), "err", err)
		return err
	}
	for i, p := range players {
		counts[pids[i]] = got[p]
	}
	return nil
}

// quotaPreload loads, in one read per board, the counts of the players
// that a group's scores need and that are not loaded yet, so that a group
// of new players costs one query instead of one each. A failure is left
// to quotaCheck, which tries each player again and fails only its score.
func (e *Engine) quotaPreload(now time.Time, ops []*op) {
	type need struct {
		def     *podium.Board
		w       podium.Period
		period  string
		counts  map[uint32]int
		players []string
		pids    []uint32
		seen    map[uint32]bool
	}
	var needs map[*boardState]*need
	for _, o := range ops {
		if o.kind != opScores || o.err != nil {
			continue
		}
		for i := range o.scores {
			s := &o.scores[i]
			bs := e.board(s.Board)
			if bs == nil {
				continue
			}
			n := needs[bs]
			if n == nil {
				n = &need{} // def nil: no quota
				if def := bs.def.Load(); def.Quota != nil && def.Aggregate == nil {
					w := podium.QuotaWindow(def, now)
					n = &need{def: def, w: w, period: podium.PeriodAt(def.Reset, now).ID, counts: bs.quota.window(w.ID), seen: map[uint32]bool{}}
				}
				if needs == nil {
					needs = map[*boardState]*need{}
				}
				needs[bs] = n
			}
			if n.def == nil {
				continue
			}
			pid := e.players.intern(s.Player)
			if _, loaded := n.counts[pid]; loaded || n.seen[pid] {
				continue
			}
			n.seen[pid] = true
			n.players = append(n.players, s.Player)
			n.pids = append(n.pids, pid)
		}
	}
	for bs, n := range needs {
		if n.def != nil && len(n.players) > 0 {
			e.quotaLoad(bs, n.def, n.w, n.period, n.counts, n.players, n.pids)
		}
	}
}

// quotaReplayed counts a submission another node logged (catchUp) in the
// loaded counts of its player, if they are loaded.
func (e *Engine) quotaReplayed(bs *boardState, def *podium.Board, pid uint32, s *podium.Submission) {
	if def.Quota == nil || bs.quota.windows == nil || s.Kind != podium.KindScore {
		return
	}
	w := podium.QuotaWindow(def, s.At)
	counts := bs.quota.windows[w.ID]
	if counts == nil || !podium.InQuotaWindow(def, w, s) {
		return
	}
	if _, loaded := counts[pid]; loaded {
		counts[pid]++
	}
}
