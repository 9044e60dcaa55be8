package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// Reads of a tournament: its status (its payouts are the tournament
// module's).

// TournamentStatus is a tournament's settings with where it stands.
type TournamentStatus struct {
	Board        string
	Tournament   podium.Tournament
	State        string // "upcoming", "open", "ended" (not settled since), "settled"
	Participants int64  // joins (tournaments that keep them)
	Entries      int    // players ranked now (hidden players left out)
	Settlement   *podium.Settlement
	Targets      []string // points boards a settlement credits
}

// Tournament returns a tournament's status; the settlement is read from
// the store, so every node answers the same. Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament).
func (e *Engine) Tournament(ctx context.Context, board string) (TournamentStatus, error) {
	bs := e.board(board)
	if bs == nil {
		return TournamentStatus{}, errBoardNotFound(board)
	}
	def := bs.def.Load()
	if def.Tournament == nil {
		return TournamentStatus{}, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	st := TournamentStatus{Board: def.ID, Tournament: *def.Tournament, Targets: e.settleTargetIDs(def.Tournament)}
	if err := e.loadSettlements(ctx); err != nil {
		e.log.Error("read settlements", "err", err)
		return TournamentStatus{}, podium.Errorf(podium.ECodeUnavailable, "could not read the settlements; retry shortly")
	}
	if tracksJoins(def.Tournament) {
		n, err := e.joinCount(ctx, bs)
		if err != nil {
			return TournamentStatus{}, err
		}
		st.Participants = n
	}
	page, err := e.Top(ctx, Query{Board: def.ID}, 0, 0)
	if err != nil {
		return TournamentStatus{}, err
	}
	st.Entries = page.Total
	now := e.now()
	e.tn.mu.Lock()
	if s, ok := e.settledSince(def); ok {
		st.Settlement = &s
	}
	e.tn.mu.Unlock()
	switch t := def.Tournament; {
	case now.Before(t.Start):
		st.State = "upcoming"
	case now.Before(t.End):
		st.State = "open"
	case st.Settlement != nil && !st.Settlement.SettledAt.Before(t.End):
		st.State = "settled"
	default:
		st.State = "ended"
	}
	return st, nil
}
