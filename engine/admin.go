package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// PutBoard creates or updates a board (already normalized). Changing the
// keys or mode of a board that has entries is ECodeConflict. created
// reports whether the board is new.
func (e *Engine) PutBoard(ctx context.Context, b *podium.Board) (info BoardInfo, created bool, err error) {
	o := &op{kind: opPutBoard, board: b}
	if err := e.send(ctx, o); err != nil {
		return BoardInfo{}, false, err
	}
	bi, err := e.Board(b.ID)
	return bi, o.created, err
}

// DeleteBoard deletes a board and all its entries. A missing board is
// ECodeBoardNotFound.
func (e *Engine) DeleteBoard(ctx context.Context, id string) error {
	return e.send(ctx, &op{kind: opDeleteBoard, board: &podium.Board{ID: id}})
}

// DeleteEntry removes one entry (admin). period is a selector.
func (e *Engine) DeleteEntry(ctx context.Context, board, period, player string) error {
	return e.send(ctx, &op{kind: opDeleteEntry, ref: podium.EntryRef{Board: board, Period: period, Player: player}})
}

// PutPlayer registers or updates a player (already normalized). Hiding or
// showing a player updates every loaded ranking at once.
func (e *Engine) PutPlayer(ctx context.Context, p *podium.Player) (podium.Player, error) {
	o := &op{kind: opPutPlayer, player: p}
	if err := e.send(ctx, o); err != nil {
		return podium.Player{}, err
	}
	return *o.player, nil
}

// Player returns a registered player, or one seen only in submissions (with
// its id as name). Unknown is ECodeNotFound.
func (e *Engine) Player(id string) (podium.Player, error) {
	if p, ok := e.players.get(id); ok {
		return p, nil
	}
	if _, ok := e.players.lookup(id); ok {
		return podium.Player{ID: id, Name: id, Meta: emptyMeta}, nil
	}
	return podium.Player{}, podium.Errorf(podium.ECodeNotFound, "player %q does not exist", id)
}

func (bs *boardState) hasEntries() bool {
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	for _, ps := range bs.periods {
		if ps.idx.Len() > 0 {
			return true
		}
	}
	for _, n := range bs.known {
		if n > 0 {
			return true
		}
	}
	return false
}

func (e *Engine) applyPutBoard(o *op) (err error) {
	defer func() {
		// Live streams re-read the definition and re-check who may see it.
		if err == nil && e.listener != nil {
			e.listener.Applied(o.board.ID, "", 0, nil)
		}
	}()
	b := o.board
	now := e.now().UTC().Truncate(1e6)
	bs := e.board(b.ID)
	b.CreatedAt, b.UpdatedAt = now, now
	if bs != nil {
		old := bs.def.Load()
		if !old.SameRanking(b) && bs.hasEntries() {
			return podium.Errorf(podium.ECodeConflict, "board %q has entries: its keys and mode cannot change (delete the board or its entries first)", b.ID)
		}
		b.CreatedAt = old.CreatedAt
	}
	if err := e.store.PutBoard(context.Background(), b); err != nil {
		return err
	}
	if bs == nil {
		e.mu.Lock()
		e.boards[b.ID] = newBoardState(b)
		e.mu.Unlock()
		o.created = true
		return nil
	}
	bs.mu.Lock()
	if !bs.def.Load().SameRanking(b) {
		// No entries (checked above): start from empty indexes in the new order.
		bs.periods = map[string]*periodState{}
		bs.known = map[string]int{}
	}
	bs.setDef(b)
	bs.mu.Unlock()
	return nil
}

func (e *Engine) applyDeleteBoard(o *op) error {
	id := o.board.ID
	if e.board(id) == nil {
		return errBoardNotFound(id)
	}
	if err := e.store.DeleteBoard(context.Background(), id); err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.boards, id)
	e.mu.Unlock()
	if e.listener != nil {
		e.listener.Applied(id, "", 0, nil)
	}
	return nil
}

func (e *Engine) applyPutPlayer(o *op) error {
	p := o.player
	p.UpdatedAt = e.now().UTC().Truncate(1e6)
	if err := e.store.PutPlayer(context.Background(), p); err != nil {
		return err
	}
	id := e.players.put(p)
	for _, bs := range e.boardStates() {
		bs.mu.Lock()
		for _, ps := range bs.periods {
			if en, ok := ps.idx.Get(id); ok && en.Hidden != p.Hidden {
				ps.idx.SetHidden(id, p.Hidden)
			}
		}
		bs.mu.Unlock()
	}
	e.notifyAll()
	return nil
}
