package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/podiumhq/podium"
)

// Catching up with the log other nodes wrote: a board's rows after the
// applied seq, replayed into its indexes (shared.go).

// syncLocked brings one board, locked by tx, up to the database: it drops
// a board that was deleted, loads one made (or made again) elsewhere, and
// replays the log up to the head.
func (sh *cluster) syncLocked(ctx context.Context, tx podium.WriteTx, id string) error {
	e := sh.e
	head, gen, ok := tx.Head(id)
	bs := e.board(id)
	if !ok {
		if bs != nil {
			e.removeBoard(id)
		}
		return nil
	}
	if bs == nil || bs.def.Load().Gen != gen {
		def, err := sh.store.LoadBoard(ctx, id)
		if err != nil || def == nil {
			return fmt.Errorf("load board %s: %w", id, err)
		}
		if bs, err = sh.reloadBoard(ctx, def); err != nil {
			return err
		}
	}
	if head > bs.seq {
		return sh.catchUp(ctx, bs, tx.Log)
	}
	return nil
}

// logReader reads a board's log after a seq: the store's, or a write
// transaction's.
type logReader func(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error

// catchUp replays the log of a board after its seq: what other nodes
// committed. It runs on the writer (or in Start, before it).
func (sh *cluster) catchUp(ctx context.Context, bs *BoardState, read logReader) error {
	e := sh.e
	def := bs.def.Load()
	touched := map[string][]uint32{}
	err := read(ctx, def.ID, bs.seq, func(s *podium.Submission) error {
		if s.Seq <= bs.seq {
			return nil
		}
		if def.PeriodExpired(e.now(), s.Period) {
			// retention.go: a period past keep_periods is not kept in
			// memory; the row only moves the board's seq.
			bs.mu.Lock()
			bs.seq = s.Seq
			bs.mu.Unlock()
			return nil
		}
		sub := *s
		sub.Keys = append([]int64(nil), s.Keys...)
		sub.Meta = nil
		if hasMeta(s.Meta) {
			sub.Meta = append(json.RawMessage(nil), s.Meta...)
		}
		// A period in the store but not in memory is read now, rows
		// included; the read count keeps it until the lock does.
		loaded, err := e.loadLazy(ctx, bs, sub.Period)
		if err != nil {
			return err
		}
		pid := e.players.intern(sub.Player)
		bs.mu.Lock()
		if loaded != nil {
			loaded.readers.Add(-1)
		}
		ps := bs.periods[sub.Period]
		if ps == nil {
			ps = newPeriodState(bs.desc)
			bs.setPeriod(sub.Period, ps)
		}
		changed, err := e.ld.replayInto(def, ps, pid, &sub)
		bs.seq = sub.Seq
		bs.mu.Unlock()
		if err != nil {
			return fmt.Errorf("replay seq %d: %w", sub.Seq, err)
		}
		e.hooks.replayed(bs, def, &sub) // hooks.go
		if changed {
			touched[sub.Period] = append(touched[sub.Period], pid)
		}
		return nil
	})
	if len(touched) > 0 {
		bs.mu.Lock()
		for period := range touched {
			if ps := bs.periods[period]; ps != nil {
				e.old.resizeLocked(ps) // an old period grew or shrank
			}
		}
		bs.mu.Unlock()
	}
	// Also when nothing changed: a period read above for a row it already
	// held (the store had the row) was kept past the budget while its
	// read count held it, and only a shrink now lets it go.
	e.old.shrink()
	if e.listener != nil {
		for period, players := range touched {
			e.listener.Applied(def.ID, period, bs.seq, players)
		}
	}
	return err
}

// rowsThenLog reads a board's log after a seq from the rows notices
// carried, as far as they follow on without a gap, and from the database
// for the rest up to head (or from the start when the first row does not
// follow the seq: a notice was lost).
func rowsThenLog(rows []podium.Row, head uint64, log logReader) logReader {
	slices.SortFunc(rows, func(a, b podium.Row) int { return cmp.Compare(a.Seq, b.Seq) })
	return func(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
		var sub podium.Submission
		for i := range rows {
			switch r := &rows[i]; {
			case r.Seq <= after:
				continue // already applied, or a duplicate
			case r.Seq != after+1:
				return log(ctx, board, after, fn) // a gap
			default:
				r.Submission(board, &sub)
				if err := fn(&sub); err != nil {
					return err
				}
				after = r.Seq
			}
		}
		if after < head {
			return log(ctx, board, after, fn)
		}
		return nil
	}
}

// errPastHead stops a log read that upTo bounds.
var errPastHead = errors.New("past the head")

// upTo reads a board's log as read does, but only up to head: the rest
// waits for a round that reads the change feed after it.
func upTo(head uint64, read logReader) logReader {
	return func(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
		err := read(ctx, board, after, func(s *podium.Submission) error {
			if s.Seq > head {
				return errPastHead
			}
			return fn(s)
		})
		if err == errPastHead { // the readers return fn's error unwrapped
			return nil
		}
		return err
	}
}
