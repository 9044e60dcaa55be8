package tournament

import (
	"context"
	"slices"

	"github.com/podiumhq/podium"
)

// Payouts returns what a tournament's settlements paid, best rank first
// (players no longer ranked last). Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament).
func (m *Module) Payouts(ctx context.Context, board string) ([]podium.Payout, error) {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return nil, podium.BoardNotFound(board)
	}
	if bs.Def().Tournament == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return nil, err
	}
	ps, err := ts.Payouts(ctx, board)
	if err != nil {
		m.log.Error("read payouts", "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the payouts; retry shortly")
	}
	slices.SortStableFunc(ps, func(a, b podium.Payout) int {
		ar, br := a.Rank, b.Rank
		if ar == 0 {
			ar = 1 << 62
		}
		if br == 0 {
			br = 1 << 62
		}
		switch {
		case ar < br:
			return -1
		case ar > br:
			return 1
		}
		return 0
	})
	return ps, nil
}
