package feed

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
)

// Keeping the feed to its cap: committed events mark their boards, and a
// background pass deletes what is past each board's cap, off the write
// path.

// pruneRows bounds the rows one prune round deletes.
const pruneRows = 1000

// committed notes the boards committed events went to, for pruning.
func (m *Module) committed(evs []podium.FeedEvent) {
	if m.store == nil || len(evs) == 0 {
		return
	}
	m.mu.Lock()
	for i := range evs {
		m.prune[evs[i].Board] = struct{}{}
	}
	m.mu.Unlock()
	for i := range evs {
		m.events.WithLabelValues(evs[i].Kind.String()).Inc()
	}
}

// Listener is an optional ability of the engine's Listener
// (engine.Config's, SetListener): it hears about feed events this node
// stored (live feed streams). Events other nodes stored are announced by
// Applied, as the boards they belong to move, or found by polling.
type Listener interface {
	FeedAppended(boards []string)
}

// announce tells the listener which boards got events.
func (m *Module) announce(evs []podium.FeedEvent) {
	fl, ok := m.host.Listener().(Listener)
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

// Start implements engine.Starter: it begins pruning. At start every board
// may be over the cap (it may have been lowered): the pruning goroutine
// first asks the store which boards are (FeedOverCap), or else visits
// every board.
func (m *Module) Start() {
	if m.store == nil {
		return
	}
	m.host.Go(m.pruneLoop)
}

// pruneLoop runs on a goroutine of its own, off the write path: every
// second it deletes the events past the cap of the boards that received
// some, at most pruneRows rows a round, until ctx ends.
func (m *Module) pruneLoop(ctx context.Context) {
	m.overCap(context.Background())
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.pruneOnce(context.Background())
	}
}

// pruneOnce is one round of pruneLoop.
func (m *Module) pruneOnce(ctx context.Context) {
	m.mu.Lock()
	boards := make([]string, 0, len(m.prune))
	for b := range m.prune {
		boards = append(boards, b)
	}
	clear(m.prune)
	m.mu.Unlock()
	if len(boards) == 0 {
		return
	}
	slices.Sort(boards)
	n, err := m.store.PruneFeed(ctx, boards, m.cap, pruneRows)
	m.deleted.Add(float64(n))
	if err != nil || n >= pruneRows {
		// Try again next round (a failure, or more left than a round
		// deletes).
		m.markPrune(boards)
	}
	if err != nil {
		m.log.Warn("prune the activity feed", "err", err)
	}
}

// overCap marks for pruning the boards that may hold more than the cap at
// start.
func (m *Module) overCap(ctx context.Context) {
	var boards []string
	if oc, ok := m.store.(podium.FeedOverCap); ok {
		var err error
		if boards, err = oc.FeedBoardsOver(ctx, m.cap); err != nil {
			m.log.Warn("find the boards over the activity feed cap; pruning every board", "err", err)
			boards = nil
			ok = false
		}
		if ok {
			m.markPrune(boards)
			return
		}
	}
	for _, bs := range m.eng.BoardStates() {
		boards = append(boards, bs.Def().ID)
	}
	m.markPrune(boards)
}

func (m *Module) markPrune(boards []string) {
	m.mu.Lock()
	for _, b := range boards {
		m.prune[b] = struct{}{}
	}
	m.mu.Unlock()
}
