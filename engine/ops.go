package engine

import "github.com/podiumhq/podium"

// The payloads of the ops other than scores (op.p), one type per kind, so
// that op itself stays a kind, the scores of the hot path, and a payload.

// deleteEntryOp removes one entry (opDeleteEntry).
type deleteEntryOp struct {
	ref podium.EntryRef // Period is a selector
}

// putBoardOp creates or updates a board (opPutBoard).
type putBoardOp struct {
	update  *podium.BoardUpdate
	created bool
	stored  *podium.Board // the board as stored, for the BoardPutters
}

// checkOp compares the indexes with the store (opCheck).
type checkOp struct {
	diffs []Diff
}

// syncOp applies what other nodes changed (opSync, shared mode).
type syncOp struct {
	changes []podium.Change         // metadata changes to reload
	heads   map[string]uint64       // boards that moved
	rows    map[string][]podium.Row // their log rows from notices
	more    bool                    // the change feed has more
	resync  bool                    // changes were missed; reload everything
	cursor  int64                   // the feed position after a resync
}

// restoreOp restores entries of one board (opRestore, restore.go).
type restoreOp struct {
	board string
	items []RestoreItem
	res   []RestoreResult
}

func (o *op) deleteEntry() *deleteEntryOp { return o.p.(*deleteEntryOp) }
func (o *op) putBoard() *putBoardOp       { return o.p.(*putBoardOp) }
func (o *op) boardID() string             { return o.p.(string) }
func (o *op) player() *podium.Player      { return o.p.(*podium.Player) }
func (o *op) check() *checkOp             { return o.p.(*checkOp) }
func (o *op) fn() func()                  { return o.p.(func()) }
func (o *op) sync() *syncOp               { return o.p.(*syncOp) }
func (o *op) work() *workOp               { return o.p.(*workOp) }
func (o *op) restore() *restoreOp         { return o.p.(*restoreOp) }
