package feed

import (
	"context"
	"encoding/json"
	"time"

	"github.com/podiumhq/podium"
)

// AppendFeed durably stores events in the activity feed, in a transaction
// of their own, and tells the live streams. It is how components other
// than the writer add events, such as a tournament's settlement:
//
//	err := feed.AppendFeed(ctx, []podium.FeedEvent{{
//		Board: "weekly-2026-w48", Kind: podium.FeedTournamentSettled,
//		Period: "all", Player: "alice", // the winner, optional
//		Keys: []int64{1200}, // optional
//		Data: json.RawMessage(`{"tournament":"weekly-2026-w48","points":[{"player":"alice","rank":1,"points":1000}]}`),
//	}})
//
// Board must exist; Kind is FeedTournamentSettled (the writer makes the
// others); Data, when set, is a JSON object of at most podium.MaxFeedData
// bytes; Player, when set, a valid player id. Seq 0 means the board's last
// seq now; At zero means now. An event whose (board, seq, kind) is
// already stored is kept as it is, so a settlement that runs twice (after
// a crash, or on two nodes) stores one event as long as it passes the same
// Seq, which seq 0 gives when the board takes no more submissions. Errors:
// ECodeBoardNotFound, ECodeInvalid, ECodeUnavailable (nothing stored).
func (m *Module) AppendFeed(ctx context.Context, evs []podium.FeedEvent) error {
	if m.store == nil {
		return errNoFeed
	}
	for i := range evs {
		ev := &evs[i]
		if ev.Kind != podium.FeedTournamentSettled {
			return podium.Errorf(podium.ECodeInvalid, "only %s events can be appended", podium.FeedTournamentSettled)
		}
		if ev.Player != "" {
			if err := podium.ValidPlayerRef(ev.Player); err != nil {
				return err
			}
		}
		if len(ev.Keys) > podium.MaxKeys || len(ev.Old) > podium.MaxKeys {
			return podium.Errorf(podium.ECodeInvalid, "a feed event has at most %d keys", podium.MaxKeys)
		}
		if ev.Data != nil {
			if len(ev.Data) > podium.MaxFeedData {
				return podium.Errorf(podium.ECodeInvalid, "feed event data is %d bytes (at most %d)", len(ev.Data), podium.MaxFeedData)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(ev.Data, &obj); err != nil || obj == nil {
				return podium.Errorf(podium.ECodeInvalid, "feed event data must be a JSON object")
			}
		}
	}
	var err error
	if serr := m.eng.OnWriter(ctx, func() { err = m.appendNow(evs) }); serr != nil {
		return serr
	}
	return err
}

// appendNow stores evs on the writer, every earlier write committed.
func (m *Module) appendNow(evs []podium.FeedEvent) error {
	st := m.host.Store()
	var stored []podium.FeedEvent
	for _, ev := range evs {
		bs := m.eng.Lookup(ev.Board)
		if bs == nil {
			return errBoardNotFound(ev.Board)
		}
		if ev.Seq == 0 {
			// The database's head, not this node's: the same on every
			// node (writes before it are all committed: the writer runs
			// this behind a barrier, or, with several nodes, others'
			// commits are in the log).
			var err error
			if ev.Seq, err = st.LastSeq(context.Background(), ev.Board); err != nil {
				return m.readFailed("read the board's last seq", err)
			}
		}
		if ev.At.IsZero() {
			ev.At = m.host.Now()
		}
		ev.At = ev.At.UTC().Truncate(time.Millisecond)
		if ev.Period == "" {
			ev.Period = podium.PeriodAt(bs.Def().Reset, ev.At).ID
		}
		stored = append(stored, ev)
	}
	batch := &podium.Batch{Parts: []podium.Part{m.store.FeedPart(stored)}}
	if err := st.Commit(context.Background(), batch); err != nil {
		return m.host.StoreFailed("append to the activity feed", err)
	}
	m.committed(stored)
	m.announce(stored)
	return nil
}
