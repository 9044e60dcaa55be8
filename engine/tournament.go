package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// Tournaments on the write path: the window, joins and the participant
// cap are checked where a score is computed (computeScore calls
// tourneyGate), so a refused item of a batch fails alone and the rest
// goes on. Joins are stored in the transaction of the group that makes
// them (podium.TourneyBatch), an explicit join as well as the first score
// of a player on a capped tournament that does not require joining: so
// the cap holds however players arrive.
//
// The writer keeps, per tournament board, the set of players who joined
// (joinSet), loaded from the store on first use. It holds joins computed
// but not yet committed too, as the pending overlay does for entries; a
// failed commit drops the sets of its boards (and recover drops them all),
// and the next use reloads them. In shared mode the writer holds the
// board's lock when it computes, and every join is written under that
// lock, so reading the joins numbered after the set's last one
// (Joins(after)) brings the set up to date.

// tourney is the engine's tournament state. Lock order: docs/LOCKS.md.
type tourney struct {
	every time.Duration // scheduler period; < 0: no scheduler
	// passes counts the scheduler's completed looks for due tournaments
	// (podium_settle_scheduler_passes_total): tests wait for looks
	// instead of sleeping through them.
	passes atomic.Uint64

	// settleMu makes this node's settlers (the scheduler, admins) take
	// turns: the lease is per node, and two of them under one lease would
	// both find a tournament due.
	settleMu sync.Mutex

	mu    sync.Mutex
	joins map[*BoardState]*joinSet
	// settled is what this node knows of settlements (from the store at
	// start and after its own runs; the scheduler re-reads the store
	// before it settles).
	settled map[string]podium.Settlement
	// failed holds when the scheduler last failed to settle a board: it
	// waits settleRetry before trying that one again.
	failed map[string]time.Time
}

// joinSet is the players who joined one tournament board.
type joinSet struct {
	players map[string]int64 // player -> n
	n       int64            // highest n assigned, pending included
	durable int64            // highest n committed
}

func newTourney(every time.Duration) *tourney {
	if every == 0 {
		every = time.Second
	}
	return &tourney{every: every, joins: map[*BoardState]*joinSet{}, settled: map[string]podium.Settlement{}, failed: map[string]time.Time{}}
}

func (e *Engine) tourneyStore() (podium.TourneyStore, error) {
	ts, ok := e.store.(podium.TourneyStore)
	if !ok {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store does not keep tournaments")
	}
	return ts, nil
}

// tracksJoins reports whether a tournament needs its join set.
func tracksJoins(t *podium.Tournament) bool {
	return t != nil && (t.JoinRequired || t.MaxParticipants > 0)
}

// joinSetOf returns the join set of a board, loading it if needed; on the
// writer only.
func (e *Engine) joinSetOf(bs *BoardState) (*joinSet, error) {
	e.tn.mu.Lock()
	js := e.tn.joins[bs]
	e.tn.mu.Unlock()
	if js != nil {
		return js, nil
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return nil, err
	}
	list, err := ts.Joins(context.Background(), bs.def.Load().ID, 0)
	if err != nil {
		e.log.Error("read joins", "board", bs.def.Load().ID, "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the tournament's joins; nothing was applied, retry shortly")
	}
	js = &joinSet{players: make(map[string]int64, len(list))}
	for _, j := range list {
		js.players[j.Player] = j.N
		js.n = max(js.n, j.N)
	}
	js.durable = js.n
	e.tn.mu.Lock()
	e.tn.joins[bs] = js
	e.tn.mu.Unlock()
	return js, nil
}

// syncJoins brings a loaded join set up to the store (shared mode, with
// the board's lock held: joins numbered after the set's last).
func (e *Engine) syncJoins(ctx context.Context, id string) error {
	bs := e.board(id)
	if bs == nil || !tracksJoins(bs.def.Load().Tournament) {
		return nil
	}
	e.tn.mu.Lock()
	js := e.tn.joins[bs]
	e.tn.mu.Unlock()
	if js == nil {
		return nil // loaded on first use
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return err
	}
	list, err := ts.Joins(ctx, id, js.durable)
	if err != nil {
		return err
	}
	e.tn.mu.Lock()
	for _, j := range list {
		js.players[j.Player] = j.N
		js.n = max(js.n, j.N)
		js.durable = max(js.durable, j.N)
	}
	e.tn.mu.Unlock()
	return nil
}

// dropJoins forgets join sets after a failed commit: boards nil means all.
func (e *Engine) dropJoins(t *podium.TourneyBatch, all bool) {
	e.tn.mu.Lock()
	defer e.tn.mu.Unlock()
	if all {
		clear(e.tn.joins)
		return
	}
	if t == nil {
		return
	}
	for _, j := range t.Joins {
		if bs := e.board(j.Board); bs != nil {
			delete(e.tn.joins, bs)
		}
	}
}

// tourneyGate checks one score against its board's tournament and points
// settings. join is true when the score, if accepted, is the player's
// join (a capped tournament that does not require joining).
func (e *Engine) tourneyGate(g *Group, bs *BoardState, def *podium.Board, player string) (join bool, err error) {
	if def.Points != nil && !g.internal {
		return false, podium.Errorf(podium.ECodePointsBoard, "board %q is a points board: only tournament settlement writes it", def.ID)
	}
	t := def.Tournament
	if t == nil {
		return false, nil
	}
	if !t.Open(g.now) {
		return false, closedError(def.ID, t, g.now)
	}
	if !tracksJoins(t) {
		return false, nil
	}
	js, err := e.joinSetOf(bs)
	if err != nil {
		return false, err
	}
	e.tn.mu.Lock()
	defer e.tn.mu.Unlock()
	if _, ok := js.players[player]; ok {
		return false, nil
	}
	if t.JoinRequired {
		return false, podium.Errorf(podium.ECodeNotJoined, "player %q has not joined tournament %q", player, def.ID)
	}
	if js.n >= int64(t.MaxParticipants) {
		return false, fullError(def.ID, t)
	}
	return true, nil
}

func closedError(id string, t *podium.Tournament, now time.Time) error {
	if now.Before(t.Start) {
		return podium.Errorf(podium.ECodeTournamentClosed, "tournament %q opens at %s", id, t.Start.Format(time.RFC3339Nano))
	}
	return podium.Errorf(podium.ECodeTournamentClosed, "tournament %q closed at %s", id, t.End.Format(time.RFC3339Nano))
}

func fullError(id string, t *podium.Tournament) error {
	return podium.Errorf(podium.ECodeTournamentFull, "tournament %q is full (%d participants)", id, t.MaxParticipants)
}

// addJoin records a join computed in group g (pending until committed).
func (e *Engine) addJoin(g *Group, bs *BoardState, board, player string) {
	js, _ := e.joinSetOf(bs) // loaded by tourneyGate or computeJoin
	e.tn.mu.Lock()
	js.n++
	js.players[player] = js.n
	n := js.n
	e.tn.mu.Unlock()
	if g.rows.tourney == nil {
		g.rows.tourney = &podium.TourneyBatch{}
	}
	g.rows.tourney.Joins = append(g.rows.tourney.Joins, podium.Join{Board: board, Player: player, N: n, At: g.now})
}

// computeJoin computes an explicit join (op opJoin) in a group.
func (e *Engine) computeJoin(g *Group, o *op) {
	jo := o.join()
	bs := e.board(jo.ref.Board)
	if bs == nil {
		o.err = errBoardNotFound(jo.ref.Board)
		return
	}
	def := bs.def.Load()
	t := def.Tournament
	if t == nil {
		o.err = podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", def.ID)
		return
	}
	if !g.now.Before(t.End) {
		o.err = closedError(def.ID, t, g.now)
		return
	}
	if !tracksJoins(t) {
		// Nothing to remember: anyone may play.
		jo.n = 0
		return
	}
	js, err := e.joinSetOf(bs)
	if err != nil {
		o.err = err
		return
	}
	e.tn.mu.Lock()
	n, ok := js.players[jo.ref.Player]
	full := !ok && t.MaxParticipants > 0 && js.n >= int64(t.MaxParticipants)
	e.tn.mu.Unlock()
	switch {
	case ok:
		jo.n, jo.before = n, true
	case full:
		o.err = fullError(def.ID, t)
	default:
		e.addJoin(g, bs, def.ID, jo.ref.Player)
		jo.n = g.rows.tourney.Joins[len(g.rows.tourney.Joins)-1].N
	}
}

// joinsCommitted marks a committed group's joins durable.
func (e *Engine) joinsCommitted(g *Group) {
	if g.rows.tourney == nil {
		return
	}
	e.tn.mu.Lock()
	defer e.tn.mu.Unlock()
	for _, j := range g.rows.tourney.Joins {
		bs := e.board(j.Board)
		if bs == nil {
			continue
		}
		if js := e.tn.joins[bs]; js != nil {
			js.durable = max(js.durable, j.N)
		}
	}
}

// JoinResult is the answer to a join.
type JoinResult struct {
	Board        string
	Player       string
	N            int64 // the player's join number (0: the tournament keeps no joins)
	Participants int64 // players joined so far
	Already      bool  // the player had joined before
}

// Join enters player into the tournament on board. Joining is possible
// until the tournament ends. Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament), ECodeInvalid (bad player id), ECodeTournamentClosed
// (ended), ECodeTournamentFull.
func (e *Engine) Join(ctx context.Context, board, player string) (JoinResult, error) {
	if err := podium.ValidPlayerID(player); err != nil {
		return JoinResult{}, err
	}
	jo := &joinOp{ref: podium.EntryRef{Board: board, Player: player}}
	o := &op{kind: opJoin, p: jo}
	if err := e.send(ctx, o); err != nil {
		return JoinResult{}, err
	}
	res := JoinResult{Board: board, Player: player, N: jo.n, Already: jo.before}
	res.Participants = e.participants(board)
	return res, nil
}

// participants is the number of committed joins of a board (0 for a
// tournament that keeps none).
func (e *Engine) participants(board string) int64 {
	bs := e.board(board)
	if bs == nil {
		return 0
	}
	e.tn.mu.Lock()
	defer e.tn.mu.Unlock()
	if js := e.tn.joins[bs]; js != nil {
		return js.durable
	}
	return 0
}

// Joined lists the players who joined a tournament, in join order,
// from offset, at most limit. Errors: ECodeBoardNotFound, ECodeNotFound
// (not a tournament).
func (e *Engine) Joined(ctx context.Context, board string, offset, limit int) ([]podium.Join, int64, error) {
	bs := e.board(board)
	if bs == nil {
		return nil, 0, errBoardNotFound(board)
	}
	if bs.def.Load().Tournament == nil {
		return nil, 0, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return nil, 0, err
	}
	total, err := e.joinCount(ctx, bs)
	if err != nil {
		return nil, 0, err
	}
	// Joins are numbered densely from 1: the page starts after n = offset.
	list, err := ts.Joins(ctx, board, int64(offset))
	if err != nil {
		return nil, 0, fmt.Errorf("joins: %w", err)
	}
	if len(list) > limit {
		list = list[:limit]
	}
	return list, total, nil
}

// tourneyUpdateAllowed refuses a change of a points board's settings
// while it has entries: they were credited under the old ones.
func tourneyUpdateAllowed(old, next *podium.Board, hasEntries bool) error {
	if !hasEntries || old.Points == nil && next.Points == nil {
		return nil
	}
	if old.Points == nil || next.Points == nil || *old.Points != *next.Points {
		return podium.Errorf(podium.ECodeConflict, "board %q has entries: its points settings cannot change", next.ID)
	}
	return nil
}

// joinCount is the number of committed joins of a tournament as the store
// has them: joins are numbered densely from 1, so it is the highest n,
// read after what this node already knows.
func (e *Engine) joinCount(ctx context.Context, bs *BoardState) (int64, error) {
	var after int64
	e.tn.mu.Lock()
	if js := e.tn.joins[bs]; js != nil {
		after = js.durable
	}
	e.tn.mu.Unlock()
	ts, err := e.tourneyStore()
	if err != nil {
		return 0, err
	}
	list, err := ts.Joins(ctx, bs.def.Load().ID, after)
	if err != nil {
		e.log.Error("read joins", "err", err)
		return 0, podium.Errorf(podium.ECodeUnavailable, "could not read the joins; retry shortly")
	}
	n := after
	for _, j := range list {
		n = max(n, j.N)
	}
	return n, nil
}

// tourneyCheckDelete refuses to delete a tournament whose settlement has
// credited points: its payouts would go with it while the points stayed on
// the points boards, which podium check could then never reconcile. The
// way out takes the points back first: remove the entries (or hide the
// players) and settle again, which pays every unranked player 0.
func (e *Engine) tourneyCheckDelete(ctx context.Context, id string) error {
	bs := e.board(id)
	if bs == nil || bs.def.Load().Tournament == nil {
		return nil
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return nil // a store without tournaments keeps no payouts
	}
	pays, err := ts.Payouts(ctx, id)
	if err != nil {
		return e.storeFailed("read payouts", err)
	}
	var players, points int64
	for _, p := range pays {
		if p.Points != 0 {
			players++
			points += p.Points
		}
	}
	if players > 0 {
		return podium.Errorf(podium.ECodeConflict, "tournament %q has credited %d points to %d players on its points boards; "+
			"remove its entries and settle it again (which takes the points back) before deleting it", id, points, players)
	}
	return nil
}
