package engine

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// The activity feed (see podium.FeedEvent). The writer derives events
// while it computes a group, from the state the group is computed against,
// and puts them in the group's rows (parts.go): they are stored in the same
// transaction as the submissions that caused them, or not at all. Nothing
// else derives events: start-up replay, following other nodes' commits,
// reloads and rebuilds replay the log into the indexes and never compute
// a group, so they cannot emit any. Other nodes read the events from the
// database, where the committing node stored them.
//
// Which submissions make events:
//   - personal_best: on a best board, a submission that improves the
//     player's entry of the period (old keys null when the player had none);
//     latest and sum boards have no personal bests (every submission
//     replaces or adds to the entry);
//   - new_leader, on every board: a submission after which its player is #1
//     of the period among visible (not hidden) players and was not before.
//     A #1 that changes without a submission of the new #1 (the old one was
//     deleted, hidden, or dropped on a latest or sum board) makes no event.
// Hidden players make no events.

// DefaultFeedCap is the number of events kept per board by default.
const DefaultFeedCap = 200

type feedState struct {
	store podium.FeedStore
	cap   int
	every time.Duration

	mu    sync.Mutex
	prune map[string]struct{} // boards that may hold more than cap events

	pruned chan struct{} // closed when the pruning goroutine ends

	events  *prometheus.CounterVec // stored by this node, by kind
	deleted prometheus.Counter     // pruned by this node
}

func newFeedState(st podium.Store, limit int, reg prometheus.Registerer) *feedState {
	fs, ok := st.(podium.FeedStore)
	if !ok {
		return nil
	}
	if limit <= 0 {
		limit = DefaultFeedCap
	}
	f := &feedState{store: fs, cap: limit, every: time.Second, prune: map[string]struct{}{}, pruned: make(chan struct{}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_feed_events_total",
			Help: "Activity feed events this node stored, by kind (the same event stored again counts again).",
		}, []string{"kind"}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podium_feed_pruned_total",
			Help: "Activity feed events this node deleted past the per-board cap.",
		})}
	if reg != nil {
		reg.MustRegister(f.events, f.deleted)
	}
	return f
}

// FeedCap is the number of events the feed keeps per board (0: no feed).
func (e *Engine) FeedCap() int {
	if e.feed == nil {
		return 0
	}
	return e.feed.cap
}

// bpKey names one period of one board.
type bpKey struct {
	bs     *BoardState
	period string
}

// leaderVal is the #1 (among visible entries) of a period as of the state
// a group is computed against. known is false when a change made it
// uncertain (the #1 got worse or was deleted); it is then worked out again
// when next needed.
type leaderVal struct {
	known  bool
	exists bool
	player uint32
	entry  rank.Entry
}

func rankCompare(orders []podium.Order, n int, a, b *rank.Entry) int {
	return podium.CompareRank(orders, a.Keys[:n], a.At, a.Seq, b.Keys[:n], b.At, b.Seq)
}

// leader returns the #1 of k as of everything computed so far: this
// group, the groups handed to the committer but not applied, the index.
func (e *Engine) leader(g *Group, k bpKey) leaderVal {
	if v, ok := g.leaders[k]; ok && v.known {
		return v
	}
	inGroup := false
	if _, ok := g.leaders[k]; ok {
		inGroup = true
	}
	if !inGroup {
		e.pmu.Lock()
		p, ok := e.pend.leaders[k]
		e.pmu.Unlock()
		if ok && p.v.known {
			return p.v
		}
	}
	// Work it out from the index, which must then hold everything before
	// this group: let the committer apply what it holds (single node; in
	// shared mode nothing is pending).
	if e.sh == nil {
		e.pmu.Lock()
		_, pending := e.pend.leaders[k]
		e.pmu.Unlock()
		if pending {
			e.barrier()
		}
	}
	return e.scanLeader(g, k)
}

// scanLeader finds the #1 of k from the index and this group's overlay.
// It costs the overlay's size; it runs only when the #1 is not tracked.
func (e *Engine) scanLeader(g *Group, k bpKey) leaderVal {
	def := k.bs.def.Load()
	orders, n := def.Orders(), len(def.Keys)
	var best leaderVal
	k.bs.mu.RLock()
	if ps := k.bs.periods[k.period]; ps != nil {
		ps.idx.Range(1, ps.idx.Len(), false, func(_ int, en rank.Entry) bool {
			if _, over := g.overlay[ovKey{k.bs, k.period, en.Player}]; over {
				return true // its entry in this group counts instead
			}
			best = leaderVal{exists: true, player: en.Player, entry: en}
			return false
		})
	}
	k.bs.mu.RUnlock()
	for ok, v := range g.overlay {
		if ok.bs != k.bs || ok.period != k.period || !v.exists || v.entry.Hidden {
			continue
		}
		if !best.exists || rankCompare(orders, n, &v.entry, &best.entry) < 0 {
			best = leaderVal{exists: true, player: ok.player, entry: v.entry}
		}
	}
	best.known = true
	return best
}

// feedScore derives the feed events of one computed score (c, whose
// entry before it was cur) and queues them in the group's rows.
func (e *Engine) feedScore(g *Group, def *podium.Board, c *change, cur ovVal, sub *podium.Submission) {
	if e.feed == nil || !c.changed || c.entry.Hidden {
		return
	}
	n := len(def.Keys)
	keys := append([]int64(nil), c.entry.Keys[:n]...)
	// Events are news, dated when they happen: the writer's clock, which
	// is a score's own date except for a settlement's credit (dated at
	// its tournament's end, possibly in the past or the future).
	if def.Mode == podium.Best {
		ev := podium.FeedEvent{Board: def.ID, Seq: sub.Seq, Kind: podium.FeedPersonalBest, At: g.now, Period: c.period,
			Player: sub.Player, Keys: keys}
		if cur.exists {
			ev.Old = append([]int64(nil), cur.entry.Keys[:n]...)
		}
		g.rows.feed = append(g.rows.feed, ev)
	}
	if g.leaders == nil {
		g.leaders = map[bpKey]leaderVal{}
	}
	k := bpKey{c.bs, c.period}
	l := e.leader(g, k)
	orders := def.Orders()
	switch {
	case l.exists && l.player == c.player:
		if rankCompare(orders, n, &c.entry, &l.entry) <= 0 {
			g.leaders[k] = leaderVal{known: true, exists: true, player: c.player, entry: c.entry}
		} else {
			g.leaders[k] = leaderVal{} // the #1 got worse: someone else may be ahead now
		}
	case !l.exists || rankCompare(orders, n, &c.entry, &l.entry) < 0:
		ev := podium.FeedEvent{Board: def.ID, Seq: sub.Seq, Kind: podium.FeedNewLeader, At: g.now, Period: c.period,
			Player: sub.Player, Keys: keys}
		if l.exists {
			ev.Old = append([]int64(nil), l.entry.Keys[:n]...)
			ev.Other = e.players.name(l.player).Player
		}
		g.rows.feed = append(g.rows.feed, ev)
		g.leaders[k] = leaderVal{known: true, exists: true, player: c.player, entry: c.entry}
	default:
		g.leaders[k] = l
	}
}

// feedDelete notes that an entry of k was deleted: if it was the #1, the
// #1 is worked out again when next needed.
func (e *Engine) feedDelete(g *Group, k bpKey) {
	if e.feed == nil {
		return
	}
	if g.leaders == nil {
		g.leaders = map[bpKey]leaderVal{}
	}
	g.leaders[k] = leaderVal{}
}

// AppendFeed durably stores events in the activity feed, in a transaction
// of their own, and tells the live streams. It is how components other
// than the writer add events, such as a tournament's settlement:
//
//	err := eng.AppendFeed(ctx, []podium.FeedEvent{{
//		Board: "weekly-2026-w48", Kind: podium.FeedTournamentSettled,
//		Period: "all", Player: "alice", // the winner, optional
//		Keys: []int64{1200}, // optional
//		Data: json.RawMessage(`{"tournament":"weekly-2026-w48","points":[{"player":"alice","rank":1,"points":1000}]}`),
//	}})
//
// Board must exist; Kind is FeedTournamentSettled (the writer makes the
// others); Data, when set, is a JSON object of at most podium.MaxFeedData
// bytes; Player, when set, a valid player id. Seq 0 means the board's last
// seq now; At zero means now. An event whose (board, seq, kind) is
// already stored is kept as it is, so a settlement that runs twice (after
// a crash, or on two nodes) stores one event as long as it passes the same
// Seq, which seq 0 gives when the board takes no more submissions. Errors:
// ECodeBoardNotFound, ECodeInvalid, ECodeUnavailable (nothing stored).
func (e *Engine) AppendFeed(ctx context.Context, evs []podium.FeedEvent) error {
	if e.feed == nil {
		return podium.Errorf(podium.ECodeUnavailable, "this store keeps no activity feed")
	}
	for i := range evs {
		ev := &evs[i]
		if ev.Kind != podium.FeedTournamentSettled {
			return podium.Errorf(podium.ECodeInvalid, "only %s events can be appended", podium.FeedTournamentSettled)
		}
		if ev.Player != "" {
			if err := podium.ValidPlayerRef(ev.Player); err != nil {
				return err
			}
		}
		if len(ev.Keys) > podium.MaxKeys || len(ev.Old) > podium.MaxKeys {
			return podium.Errorf(podium.ECodeInvalid, "a feed event has at most %d keys", podium.MaxKeys)
		}
		if ev.Data != nil {
			if len(ev.Data) > podium.MaxFeedData {
				return podium.Errorf(podium.ECodeInvalid, "feed event data is %d bytes (at most %d)", len(ev.Data), podium.MaxFeedData)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(ev.Data, &obj); err != nil || obj == nil {
				return podium.Errorf(podium.ECodeInvalid, "feed event data must be a JSON object")
			}
		}
	}
	var err error
	o := &op{kind: opFunc}
	o.p = func() {
		var stored []podium.FeedEvent
		for _, ev := range evs {
			bs := e.board(ev.Board)
			if bs == nil {
				err = errBoardNotFound(ev.Board)
				return
			}
			if ev.Seq == 0 {
				// The database's head, not this node's: the same on
				// every node (writes before it are all committed: the
				// writer runs this behind a barrier, or, with several
				// nodes, others' commits are in the log).
				if ev.Seq, err = e.store.LastSeq(context.Background(), ev.Board); err != nil {
					err = e.readFailed("read the board's last seq", err)
					return
				}
			}
			if ev.At.IsZero() {
				ev.At = e.now()
			}
			ev.At = ev.At.UTC().Truncate(time.Millisecond)
			if ev.Period == "" {
				ev.Period = podium.PeriodAt(bs.def.Load().Reset, ev.At).ID
			}
			stored = append(stored, ev)
		}
		batch := &podium.Batch{Parts: []podium.Part{e.feed.store.FeedPart(stored)}}
		if err = e.store.Commit(context.Background(), batch); err != nil {
			err = e.storeFailed("append to the activity feed", err)
			return
		}
		e.feedCommitted(stored)
		e.feedApplied(stored)
	}
	if serr := e.send(ctx, o); serr != nil {
		return serr
	}
	return err
}

// FeedListener is an optional ability of a Listener: it hears about feed
// events this node stored (live feed streams). Events other nodes stored
// are announced by Applied, as the boards they belong to move, or found
// by polling.
type FeedListener interface {
	FeedAppended(boards []string)
}

// feedApplied tells the listener which boards got events.
func (e *Engine) feedApplied(evs []podium.FeedEvent) {
	fl, ok := e.listener.(FeedListener)
	if !ok || len(evs) == 0 {
		return
	}
	boards := make([]string, 0, 2)
	for i := range evs {
		if !slices.Contains(boards, evs[i].Board) {
			boards = append(boards, evs[i].Board)
		}
	}
	fl.FeedAppended(boards)
}
