package engine

import (
	"context"
	"errors"
	"time"

	"github.com/podiumhq/podium"
)

// Live is what a live stream window shows of a board: the top entries of
// its current period together with the board's definition and generation,
// all read under the board's lock, so that the visibility, keys and title
// always belong to the entries they come with.
type Live struct {
	Def podium.Board
	// Generation changes when the board is deleted and made again (or
	// the indexes are reloaded). Opaque.
	Generation uint64
	NextReset  *time.Time // end of the period, nil if it never resets
	Page
}

// errDefMoved reports that a PUT replaced the board's definition between
// reading it and locking the board.
var errDefMoved = errors.New("board definition changed during the read")

// LiveTop returns the top limit entries of a board's current period with
// the board's definition. A missing board is ECodeBoardNotFound.
func (e *Engine) LiveTop(ctx context.Context, board string, limit int) (Live, error) {
	for {
		var lv Live
		err := e.view(ctx, Query{Board: board}, func(bs *BoardState, def *podium.Board, period string, ps *periodState) error {
			// A PUT replaces def under bs.mu, which view holds now: if it
			// is still the one the period came from, it goes with these
			// entries.
			if bs.def.Load() != def {
				return errDefMoved
			}
			lv = Live{Def: *def, Generation: bs.gen, Page: e.topLocked(bs, def, period, ps, 0, limit, false)}
			if p := podium.PeriodAt(def.Reset, e.now()); p.ID == period && !p.End.IsZero() {
				end := p.End.UTC()
				lv.NextReset = &end
			}
			return nil
		})
		if errors.Is(err, errDefMoved) {
			continue
		}
		return lv, err
	}
}
