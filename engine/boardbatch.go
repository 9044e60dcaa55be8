package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// Board creations in groups. Each PUT of a board used to be a transaction
// and an fsync of its own, so boards were made one fsync at a time (about
// 1,150/s with SQLite --sync full). The PUTs that queue while one is
// stored now share the next transaction and fsync, as scores do; each is
// still answered only once its own definition is on disk.
//
// The PUTs of one group are checked one after the other against memory as
// it was before the group, which is right for changes that do not depend
// on each other. So a group takes only PUTs of different boards that lock
// no other board (PutLocks: an aggregate or a group board, whose checks
// read its sources): a second PUT of a board in the group, or one that
// reads others, first stores the group before it and is checked after it
// is applied. A PUT that is refused (invalid, a conflict) is answered with
// its error and changes nothing; the others go on.

// boardBatcher is an optional Store ability: several board puts in one
// transaction and one sync, all or none (sqlite.Store).
type boardBatcher interface {
	PutBoards(ctx context.Context, puts []podium.BoardPut) error
}

// maxBoardGroup bounds the boards of one transaction.
const maxBoardGroup = 256

// groupedPut is a checked board PUT that waits for its group's commit.
type groupedPut struct {
	op *op
	preparedPut
}

// putBoards makes a run of board PUTs (localCommitter): in groups when the
// store can, one by one otherwise. It sets each op's err.
func (c localCommitter) putBoards(ops []*op) {
	e := c.e
	bb, ok := e.store.(boardBatcher)
	if !ok || len(ops) == 1 {
		for _, o := range ops {
			o.err = c.putBoard(o.putBoard())
		}
		return
	}
	var group []groupedPut
	ids := map[string]bool{}
	flush := func() {
		if len(group) > 0 {
			c.storeBoardGroup(bb, group)
			group = group[:0]
			clear(ids)
		}
	}
	for _, o := range ops {
		pb := o.putBoard()
		if ids[pb.update.ID] || len(group) == maxBoardGroup {
			flush()
		}
		var cur *podium.Board
		if bs := e.board(pb.update.ID); bs != nil {
			cur = bs.def.Load()
		}
		if len(e.hooks.putLocks(pb.update, cur)) > 0 {
			flush()
			o.err = c.putBoard(pb)
			continue
		}
		p, err := e.preparePutBoard(pb)
		if err != nil {
			o.err = err
			continue
		}
		group = append(group, groupedPut{o, p})
		ids[pb.update.ID] = true
	}
	flush()
}

// storeBoardGroup stores checked PUTs in one transaction and applies them
// in order, or fails them all with the store's error.
func (c localCommitter) storeBoardGroup(bb boardBatcher, group []groupedPut) {
	e := c.e
	puts := make([]podium.BoardPut, len(group))
	for i, p := range group {
		puts[i] = podium.BoardPut{Board: p.b, Parts: e.hooks.boardParts(e.store, p.old, p.b)}
	}
	err := e.health.storeFailed("put board", bb.PutBoards(context.Background(), puts))
	for _, p := range group {
		p.op.err = p.finish(e, err)
	}
}
