package engine

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
)

// Keeping the activity feed to its cap: committed events mark their boards,
// and a background pass deletes what is past each board's cap (feed.go).

// feedPruneRows bounds the rows one prune round deletes.
const feedPruneRows = 1000

// feedCommitted notes the boards a committed batch added events to, for
// pruning.
func (e *Engine) feedCommitted(evs []podium.FeedEvent) {
	if e.feed == nil || len(evs) == 0 {
		return
	}
	e.feed.mu.Lock()
	for i := range evs {
		e.feed.prune[evs[i].Board] = struct{}{}
	}
	e.feed.mu.Unlock()
	for i := range evs {
		e.feed.events.WithLabelValues(evs[i].Kind.String()).Inc()
	}
}

// pruneFeed runs on a goroutine of its own, off the write path: every
// second it deletes the events past the cap of the boards that received
// some, at most feedPruneRows rows a round.
func (e *Engine) pruneFeed() {
	defer close(e.feed.pruned)
	e.feedOverCap(context.Background())
	t := time.NewTicker(e.feed.every)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		e.pruneFeedOnce(context.Background())
	}
}

// pruneFeedOnce is one round of pruneFeed.
func (e *Engine) pruneFeedOnce(ctx context.Context) {
	e.feed.mu.Lock()
	boards := make([]string, 0, len(e.feed.prune))
	for b := range e.feed.prune {
		boards = append(boards, b)
	}
	clear(e.feed.prune)
	e.feed.mu.Unlock()
	if len(boards) == 0 {
		return
	}
	slices.Sort(boards)
	n, err := e.feed.store.PruneFeed(ctx, boards, e.feed.cap, feedPruneRows)
	e.feed.deleted.Add(float64(n))
	if err != nil || n >= feedPruneRows {
		// Try again next round (a failure, or more left than a round
		// deletes).
		e.feed.mu.Lock()
		for _, b := range boards {
			e.feed.prune[b] = struct{}{}
		}
		e.feed.mu.Unlock()
	}
	if err != nil {
		e.log.Warn("prune the activity feed", "err", err)
	}
}

// startFeed begins pruning; at start every board may be over the cap (it
// may have been lowered): the pruning goroutine first asks the store which
// boards are (FeedOverCap), or else visits every board.
func (e *Engine) startFeed() {
	if e.feed == nil {
		return
	}
	go e.pruneFeed()
}

// feedOverCap marks for pruning the boards that may hold more than the
// cap at start.
func (e *Engine) feedOverCap(ctx context.Context) {
	var boards []string
	if oc, ok := e.feed.store.(podium.FeedOverCap); ok {
		var err error
		if boards, err = oc.FeedBoardsOver(ctx, e.feed.cap); err != nil {
			e.log.Warn("find the boards over the activity feed cap; pruning every board", "err", err)
			boards = nil
			ok = false
		}
		if ok {
			e.markPrune(boards)
			return
		}
	}
	for _, bs := range e.boardStates() {
		boards = append(boards, bs.def.Load().ID)
	}
	e.markPrune(boards)
}

func (e *Engine) markPrune(boards []string) {
	e.feed.mu.Lock()
	for _, b := range boards {
		e.feed.prune[b] = struct{}{}
	}
	e.feed.mu.Unlock()
}

// feedStopped waits for the pruning goroutine after Close stopped it, so
// that nothing uses the store once Close returns.
func (e *Engine) feedStopped() {
	if e.feed != nil {
		<-e.feed.pruned
	}
}
