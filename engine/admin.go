package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// PutBoard creates a board or replaces every field of an existing one (b
// need not be normalized). See UpdateBoard for the errors.
func (e *Engine) PutBoard(ctx context.Context, b *podium.Board) (info BoardInfo, created bool, err error) {
	return e.UpdateBoard(ctx, podium.FullUpdate(b))
}

// UpdateBoard creates a board or updates the fields u gives, keeping the
// others. The result is normalized on the writer (ECodeInvalid when it is
// not a valid board). Changing the keys, the mode or the reset cadence of a
// board that has entries is ECodeConflict: none of them may change without
// losing or hiding stored entries. created reports whether the board is new.
func (e *Engine) UpdateBoard(ctx context.Context, u *podium.BoardUpdate) (info BoardInfo, created bool, err error) {
	pb := &putBoardOp{update: u}
	o := &op{kind: opPutBoard, p: pb}
	if err := e.send(ctx, o); err != nil {
		return BoardInfo{}, false, err
	}
	for _, p := range e.hooks.putters { // hooks_board.go: an aggregate recomputes
		if err := p.BoardPut(ctx, pb.stored); err != nil {
			return BoardInfo{}, false, err
		}
	}
	bi, err := e.Board(u.ID)
	return bi, pb.created, err
}

// DeleteBoard deletes a board and all its entries. A missing board is
// ECodeBoardNotFound.
func (e *Engine) DeleteBoard(ctx context.Context, id string) error {
	return e.send(ctx, &op{kind: opDeleteBoard, p: id})
}

// DeleteEntry removes one entry (admin). period is a selector.
func (e *Engine) DeleteEntry(ctx context.Context, board, period, player string) error {
	return e.send(ctx, &op{kind: opDeleteEntry, p: &deleteEntryOp{ref: podium.EntryRef{Board: board, Period: period, Player: player}}})
}

// PutPlayer registers or updates a player (already normalized). Hiding or
// showing a player updates every loaded ranking at once.
func (e *Engine) PutPlayer(ctx context.Context, p *podium.Player) (podium.Player, error) {
	o := &op{kind: opPutPlayer, p: p}
	if err := e.send(ctx, o); err != nil {
		return podium.Player{}, err
	}
	return *p, nil
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

// PlayersVersion returns a number that moves after any player changes
// (a name, a hidden flag; on this node or learned from another), so that
// a reader that keeps what it computed from players (the CTF service's
// live standings) knows in O(1) whether it must look again.
func (e *Engine) PlayersVersion() uint64 { return e.players.ver.Load() }

func (bs *BoardState) hasEntries() bool {
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

// applyPutBoard runs a board update on the writer: merge, validate, check
// the conflicts against the board's entries, store (with put, which is the
// store's PutBoard, or a SharedStore transaction's) and apply. put writes
// the modules' rows of the change (BoardPartMaker) in its transaction:
// parts returns them, once b is as it is stored (a SharedStore's PutBoard
// sets its Gen, which a module's rows may name).
func (e *Engine) applyPutBoard(o *putBoardOp, put func(b *podium.Board, parts func() []podium.Part) error) error {
	p, err := e.preparePutBoard(o)
	if err != nil {
		return err
	}
	err = put(p.b, func() []podium.Part { return e.hooks.boardParts(e.store, p.old, p.b) })
	return p.finish(e, e.health.storeFailed("put board", err))
}

// preparedPut is a board PUT that was checked (preparePutBoard) and waits
// for the store: old is the board now (nil if new), b the board to store.
type preparedPut struct {
	o      *putBoardOp
	old, b *podium.Board
}

// preparePutBoard is the first half of applyPutBoard: the board now and
// the board to store, or why it may not be stored.
func (e *Engine) preparePutBoard(o *putBoardOp) (preparedPut, error) {
	var old, b *podium.Board
	bs := e.board(o.update.ID)
	if bs != nil {
		old = bs.def.Load()
	}
	next := o.update.Apply(old)
	if err := next.Normalize(); err != nil {
		return preparedPut{}, err
	}
	b = &next
	now := e.now().UTC().Truncate(1e6)
	b.CreatedAt, b.UpdatedAt = now, now
	if bs != nil {
		if bs.hasEntries() {
			if !old.SameRanking(b) {
				return preparedPut{}, podium.Errorf(podium.ECodeConflict, "board %q has entries: its keys and mode cannot change (delete the board or its entries first)", b.ID)
			}
			if !old.SameCadence(b) {
				return preparedPut{}, podium.Errorf(podium.ECodeConflict, "board %q has entries: its reset cadence and time zone cannot change, as its stored periods would be lost from view (create another board, or delete this board's entries first)", b.ID)
			}
		}
		b.CreatedAt = old.CreatedAt
		b.Gen = old.Gen
		// retention.go: what the old definition no longer kept stays
		// gone; a new cadence (only without entries) starts afresh.
		b.PeriodsFrom = ""
		if old.SameCadence(b) {
			b.PeriodsFrom = old.RetainedFloor(e.now())
		}
	} else {
		b.PeriodsFrom = ""
	}
	if err := e.hooks.checkPut(b); err != nil { // hooks_board.go: aggregates, tournaments' points boards
		return preparedPut{}, err
	}
	return preparedPut{o, old, b}, nil
}

// finish is the second half of applyPutBoard, once the store has
// answered (err, already as health.storeFailed makes it): the modules hear
// how it ended and a stored board is applied.
func (p preparedPut) finish(e *Engine, err error) error {
	e.hooks.boardStored(p.old, p.b, err)
	if err != nil {
		return err
	}
	p.o.created, p.o.stored = p.old == nil, p.b
	e.installBoard(p.b)
	return nil
}

// installBoard makes the in-memory board match b: a new board starts
// empty; a board whose ranking or cadence changed (allowed only without
// entries) starts from empty indexes; otherwise only the definition
// changes.
func (e *Engine) installBoard(b *podium.Board) {
	bs := e.board(b.ID)
	if bs == nil {
		e.mu.Lock()
		e.boards.put(newBoardState(b))
		e.mu.Unlock()
		e.hooks.boardChanged(nil, b)
		if e.listener != nil {
			e.listener.Applied(b.ID, "", 0, nil)
		}
		return
	}
	old := bs.def.Load()
	bs.mu.Lock()
	reset := !old.SameRanking(b) || !old.SameCadence(b)
	if reset {
		bs.periods = nil
		bs.known = nil
	}
	bs.setDef(b)
	seq := bs.seq
	bs.mu.Unlock()
	e.mu.Lock()
	e.boards.track(bs)
	e.mu.Unlock()
	e.hooks.boardChanged(old, b)
	if reset {
		e.old.dropBoard(bs) // oldperiods.go
	}
	// Live streams re-read the definition and re-check who may see it.
	if e.listener != nil {
		e.listener.Applied(b.ID, "", seq, nil)
	}
}

// applyDeleteBoard runs a board's delete on the writer: check, store (with
// del, which is the store's DeleteBoard, or a SharedStore transaction's,
// writing parts, the modules' rows of the change, in its transaction) and
// apply.
func (e *Engine) applyDeleteBoard(id string, del func(id string, parts []podium.Part) error) error {
	bs := e.board(id)
	if bs == nil {
		return errBoardNotFound(id)
	}
	if err := e.hooks.checkDelete(id); err != nil { // hooks_board.go: aggregates, then tournaments with payouts
		return err
	}
	old := bs.def.Load()
	err := del(id, e.hooks.boardParts(e.store, old, nil))
	e.hooks.boardStored(old, nil, err)
	if err != nil {
		return e.health.storeFailed("delete board", err)
	}
	e.removeBoard(id)
	return nil
}

// removeBoard forgets a deleted board.
func (e *Engine) removeBoard(id string) {
	e.mu.Lock()
	bs := e.boards.remove(id)
	e.mu.Unlock()
	if bs != nil {
		e.old.dropBoard(bs) // oldperiods.go
		e.hooks.boardChanged(bs.def.Load(), nil)
	}
	if e.listener != nil {
		e.listener.Applied(id, "", 0, nil)
	}
}

func (e *Engine) applyPutPlayer(p *podium.Player) error {
	p.UpdatedAt = e.now().UTC().Truncate(1e6)
	if err := e.store.PutPlayer(context.Background(), p); err != nil {
		return e.health.storeFailed("put player", err)
	}
	e.installPlayer(p)
	e.sh.changed()
	return nil
}

// installPlayer applies a player's name and hidden flag to every loaded
// ranking.
func (e *Engine) installPlayer(p *podium.Player) {
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
	e.players.ver.Add(1) // after the hidden flags too (etag.go)
	e.notifyAll()
}
