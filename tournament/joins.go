package tournament

import (
	"context"
	"fmt"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// joinSet is the players who joined one tournament board.
type joinSet struct {
	players map[string]int64 // player -> n
	n       int64            // highest n assigned, pending included
	durable int64            // highest n committed
}

// tracksJoins reports whether a tournament needs its join set.
func tracksJoins(t *podium.Tournament) bool {
	return t != nil && (t.JoinRequired || t.MaxParticipants > 0)
}

// joinSetOf returns the join set of a board, loading it if needed; on the
// writer only.
func (m *Module) joinSetOf(bs *engine.BoardState) (*joinSet, error) {
	m.mu.Lock()
	js := m.joins[bs]
	m.mu.Unlock()
	if js != nil {
		return js, nil
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return nil, err
	}
	list, err := ts.Joins(context.Background(), bs.Def().ID, 0)
	if err != nil {
		m.log.Error("read joins", "board", bs.Def().ID, "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the tournament's joins; nothing was applied, retry shortly")
	}
	js = &joinSet{players: make(map[string]int64, len(list))}
	for _, j := range list {
		js.players[j.Player] = j.N
		js.n = max(js.n, j.N)
	}
	js.durable = js.n
	m.mu.Lock()
	m.joins[bs] = js
	m.mu.Unlock()
	return js, nil
}

// CheckScore checks one score against its board's tournament and points
// settings: a points board takes only a settlement's credits, and a
// tournament's scores come in its window from players who joined (or, on
// a capped tournament that does not require joining, while it has room).
func (m *Module) CheckScore(g *engine.Group, c *engine.Candidate) error {
	_, err := m.gate(g, c)
	return err
}

// ScoreLogged joins the player of a logged score on a capped tournament
// that does not require joining, if it is the player's first.
func (m *Module) ScoreLogged(g *engine.Group, c *engine.Candidate) {
	t := c.Def.Tournament
	if !tracksJoins(t) || t.JoinRequired {
		return
	}
	js, err := m.joinSetOf(c.Board) // loaded by CheckScore
	if err != nil {
		return
	}
	m.mu.Lock()
	_, ok := js.players[c.Player]
	m.mu.Unlock()
	if !ok {
		m.addJoin(g, c.Board, c.Def.ID, c.Player)
	}
}

// gate is CheckScore; join is true when the score, if accepted, is the
// player's join.
func (m *Module) gate(g *engine.Group, c *engine.Candidate) (join bool, err error) {
	def := c.Def
	if def.Points != nil && !g.Internal() {
		return false, podium.Errorf(podium.ECodePointsBoard, "board %q is a points board: only tournament settlement writes it", def.ID)
	}
	t := def.Tournament
	if t == nil {
		return false, nil
	}
	if !t.Open(g.Now()) {
		return false, closedError(def.ID, t, g.Now())
	}
	if !tracksJoins(t) {
		return false, nil
	}
	js, err := m.joinSetOf(c.Board)
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := js.players[c.Player]; ok {
		return false, nil
	}
	if t.JoinRequired {
		return false, podium.Errorf(podium.ECodeNotJoined, "player %q has not joined tournament %q", c.Player, def.ID)
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

// addJoin records a join computed in group g (pending until committed)
// and returns its number.
func (m *Module) addJoin(g *engine.Group, bs *engine.BoardState, board, player string) int64 {
	js, _ := m.joinSetOf(bs) // loaded by gate or join
	m.mu.Lock()
	js.n++
	js.players[player] = js.n
	n := js.n
	m.mu.Unlock()
	r := m.rows(g)
	r.joins = append(r.joins, podium.Join{Board: board, Player: player, N: n, At: g.Now()})
	return n
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
func (m *Module) Join(ctx context.Context, board, player string) (JoinResult, error) {
	if err := podium.ValidPlayerID(player); err != nil {
		return JoinResult{}, err
	}
	res := JoinResult{Board: board, Player: player}
	w := &engine.Work{Boards: []string{board}, Compute: func(g *engine.Group) error {
		var err error
		res.N, res.Already, err = m.join(g, board, player)
		return err
	}}
	if err := m.eng.Do(ctx, w); err != nil {
		return JoinResult{}, err
	}
	res.Participants = m.participants(board)
	return res, nil
}

// join computes an explicit join in a group: the player's number, and
// whether the player had joined before.
func (m *Module) join(g *engine.Group, board, player string) (n int64, before bool, err error) {
	bs := g.Board(board)
	if bs == nil {
		return 0, false, podium.BoardNotFound(board)
	}
	def := bs.Def()
	t := def.Tournament
	if t == nil {
		return 0, false, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", def.ID)
	}
	if !g.Now().Before(t.End) {
		return 0, false, closedError(def.ID, t, g.Now())
	}
	if !tracksJoins(t) {
		return 0, false, nil // nothing to remember: anyone may play
	}
	js, err := m.joinSetOf(bs)
	if err != nil {
		return 0, false, err
	}
	m.mu.Lock()
	n, ok := js.players[player]
	full := !ok && t.MaxParticipants > 0 && js.n >= int64(t.MaxParticipants)
	m.mu.Unlock()
	switch {
	case ok:
		return n, true, nil
	case full:
		return 0, false, fullError(def.ID, t)
	}
	return m.addJoin(g, bs, def.ID, player), false, nil
}

// participants is the number of committed joins of a board (0 for a
// tournament that keeps none).
func (m *Module) participants(board string) int64 {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if js := m.joins[bs]; js != nil {
		return js.durable
	}
	return 0
}

// Joined lists the players who joined a tournament, in join order,
// from offset, at most limit. Errors: ECodeBoardNotFound, ECodeNotFound
// (not a tournament).
func (m *Module) Joined(ctx context.Context, board string, offset, limit int) ([]podium.Join, int64, error) {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return nil, 0, podium.BoardNotFound(board)
	}
	if bs.Def().Tournament == nil {
		return nil, 0, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return nil, 0, err
	}
	total, err := m.JoinCount(ctx, bs)
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

// JoinCount is the number of committed joins of a tournament as the store
// has them: joins are numbered densely from 1, so it is the highest n,
// read after what this node already knows.
func (m *Module) JoinCount(ctx context.Context, bs *engine.BoardState) (int64, error) {
	var after int64
	m.mu.Lock()
	if js := m.joins[bs]; js != nil {
		after = js.durable
	}
	m.mu.Unlock()
	ts, err := m.tourneyStore()
	if err != nil {
		return 0, err
	}
	list, err := ts.Joins(ctx, bs.Def().ID, after)
	if err != nil {
		m.log.Error("read joins", "err", err)
		return 0, podium.Errorf(podium.ECodeUnavailable, "could not read the joins; retry shortly")
	}
	n := after
	for _, j := range list {
		n = max(n, j.N)
	}
	return n, nil
}
