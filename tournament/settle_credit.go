package tournament

import (
	"encoding/json"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/scoring"
)

// Points credits of a settlement: what each points board is credited with,
// from the final ranking of a tournament (settle.go).

func changes2deltas[C any](cs []C, f func(C) (string, int64)) []delta {
	out := make([]delta, 0, len(cs))
	for _, c := range cs {
		p, d := f(c)
		if d != 0 {
			out = append(out, delta{p, d})
		}
	}
	return out
}

type delta struct {
	player string
	points int64
}

func sameKeys(a, b *podium.Board) bool {
	if len(a.Keys) != len(b.Keys) {
		return false
	}
	for i := range a.Keys {
		if a.Keys[i].Order != b.Keys[i].Order {
			return false
		}
	}
	return true
}

// bestCredits returns the submissions that bring a best board up to date
// with a tournament's final ranking: for each ranked player, their rank
// (by "rank") or their entry's keys (by "score"), when that is better
// than what the board holds for them, or they have no entry. It compares
// with the board rather than with the payouts: a better time at the same
// rank changes no payout but is a better entry on a by-score board, and a
// board created after an earlier run still hears of every result. A run
// that finds nothing better credits nothing, so runs stay idempotent.
func bestCredits(tb *engine.BoardState, td *podium.Board, g *engine.Group, final []ranked) ([]engine.Score, error) {
	period := podium.PeriodAt(td.Reset, g.Now()).ID
	if err := g.Hold(tb, period); err != nil {
		return nil, err
	}
	orders := td.Orders()
	var out []engine.Score
	for _, r := range final {
		keys := []int64{r.rank}
		if td.Points.By == "score" {
			keys = r.keys
		}
		if pid, known := g.PID(r.player); known {
			cur := g.Current(tb, period, pid)
			if cur.Exists && !podium.Better(orders, keys, cur.Entry.Keys[:len(orders)]) {
				continue
			}
		}
		out = append(out, engine.Score{Board: td.ID, Player: r.player, Keys: keys})
	}
	return out, nil
}

// currentCredits returns the submissions that credit deltas, dated date,
// to a decaying board (scoring/decay.go): first, if date falls in a later
// era than the board's, the move of every entry to that era, written in
// the board's current order so ties keep their order; then each credit in
// fixed point. The group runs alone: the board's entries as of the group
// are its index's.
func currentCredits(tb *engine.BoardState, td *podium.Board, g *engine.Group, date time.Time, ds []delta) ([]engine.Score, int, error) {
	h := int64(td.Points.HalfLifeDays) * 24 * 3600 * 1000
	period := podium.PeriodAt(td.Reset, g.Now()).ID
	if err := g.Hold(tb, period); err != nil {
		return nil, 0, err
	}
	target := scoring.Era(podium.Millis(date), h)
	var out []engine.Score
	era := target
	rebased := 0
	pids, err := g.Players(tb, period) // every entry, hidden ones too, best first
	if err != nil {
		return nil, 0, err
	}
	if len(pids) > 0 {
		era = g.Current(tb, period, pids[0]).Entry.Keys[0]
		if era < target {
			j := target - era
			for _, pid := range pids {
				k := g.Current(tb, period, pid).Entry.Keys[1]
				out = append(out, engine.Score{Board: td.ID, Player: g.PlayerID(pid), Keys: []int64{j, scoring.Rebase(k, j) - k}})
			}
			rebased = len(out)
			era = target
		}
	}
	for _, d := range ds {
		sc := scoring.Scaled(d.points, podium.Millis(date), era, h)
		if sc == 0 {
			continue
		}
		keys := []int64{0, sc}
		pid, known := g.PID(d.player)
		if !known || !g.Current(tb, period, pid).Exists {
			keys[0] = era
		}
		out = append(out, engine.Score{Board: td.ID, Player: d.player, Keys: keys})
	}
	return out, rebased, nil
}

// settledFeedTop is how many of the final ranking a "tournament settled"
// feed event lists (it stays well under podium.MaxFeedData).
const settledFeedTop = 10

// settledEvent is the "tournament settled" feed event of a run: the winner
// with their keys, and the first settledFeedTop places with their points.
func settledEvent(def *podium.Board, period string, seq uint64, now time.Time, final []ranked, st podium.Settlement) podium.FeedEvent {
	type place struct {
		Player string `json:"player"`
		Rank   int64  `json:"rank"`
		Points int64  `json:"points"`
	}
	data := struct {
		Tournament string  `json:"tournament"`
		Run        int64   `json:"run"`
		Players    int64   `json:"players"`
		Paid       int64   `json:"paid"`
		Top        []place `json:"top"`
	}{Tournament: def.ID, Run: st.Runs, Players: st.Players, Paid: st.Paid, Top: []place{}}
	for _, r := range final[:min(len(final), settledFeedTop)] {
		data.Top = append(data.Top, place{Player: r.player, Rank: r.rank, Points: scoring.RankPoints(def.Tournament.Weight, r.rank)})
	}
	raw, _ := json.Marshal(data) // plain types: cannot fail
	ev := podium.FeedEvent{Board: def.ID, Seq: seq, Kind: podium.FeedTournamentSettled, At: now, Period: period, Data: raw}
	if len(final) > 0 {
		ev.Player, ev.Keys = final[0].player, final[0].keys
	}
	return ev
}
