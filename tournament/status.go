package tournament

import (
	"context"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Reads of a tournament: its status (its payouts: payouts.go).

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
func (m *Module) Tournament(ctx context.Context, board string) (TournamentStatus, error) {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return TournamentStatus{}, podium.BoardNotFound(board)
	}
	def := bs.Def()
	if def.Tournament == nil {
		return TournamentStatus{}, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	st := TournamentStatus{Board: def.ID, Tournament: *def.Tournament, Targets: m.targetIDs(def.Tournament)}
	if err := m.loadSettlements(ctx); err != nil {
		m.log.Error("read settlements", "err", err)
		return TournamentStatus{}, podium.Errorf(podium.ECodeUnavailable, "could not read the settlements; retry shortly")
	}
	if tracksJoins(def.Tournament) {
		n, err := m.JoinCount(ctx, bs)
		if err != nil {
			return TournamentStatus{}, err
		}
		st.Participants = n
	}
	page, err := m.eng.Top(ctx, engine.Query{Board: def.ID}, 0, 0)
	if err != nil {
		return TournamentStatus{}, err
	}
	st.Entries = page.Total
	now := m.host.Now()
	m.smu.Lock()
	if s, ok := m.settledSince(def); ok {
		st.Settlement = &s
	}
	m.smu.Unlock()
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
