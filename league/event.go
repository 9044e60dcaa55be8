package league

import (
	"encoding/json"
	"time"

	"github.com/podiumhq/podium"
)

// settledEvent is the "league settled" feed event of a settlement (and the
// webhook league.settled, which the webhooks module makes of it): the
// period's counts and each player's outcome, as many as fit in a feed
// event's data (podium.MaxFeedData), movers first (promoted, then
// relegated, then dropped); "truncated" says how many were left out. The
// full list is each cohort's (GET /v1/leagues/{board}/tiers/{tier}/
// cohorts/{cohort}?period=) and each player's history. Its id is the
// board's seq at settlement: a period settles once, so the event is stored
// once.
func settledEvent(def *podium.Board, period string, seq uint64, now time.Time, results []podium.LeagueResult, st podium.LeaguePeriod) podium.FeedEvent {
	type outcome struct {
		Player  string `json:"player"`
		Tier    string `json:"tier"`
		Cohort  *int   `json:"cohort"`
		Rank    *int   `json:"rank"`
		Outcome string `json:"outcome"`
		Next    string `json:"next_tier"`
	}
	type data struct {
		League    string    `json:"league"`
		Players   int64     `json:"players"`
		Promoted  int64     `json:"promoted"`
		Relegated int64     `json:"relegated"`
		Outcomes  []outcome `json:"outcomes"`
		Truncated int       `json:"truncated"`
	}
	l := def.League
	name := func(t int) string { return l.Tiers[min(max(t, 0), len(l.Tiers)-1)].Name }
	d := data{League: def.ID, Players: st.Players, Promoted: st.Promoted, Relegated: st.Relegated, Outcomes: []outcome{}}
	order := []string{podium.OutcomePromoted, podium.OutcomeRelegated, podium.OutcomeAbsent, podium.OutcomeStayed}
	size := 200 // the envelope, generously
	full := false
	for _, want := range order {
		for i := range results {
			r := &results[i]
			if r.Outcome != want {
				continue
			}
			if full {
				d.Truncated++
				continue
			}
			o := outcome{Player: r.Player, Tier: name(r.Tier), Outcome: r.Outcome, Next: name(r.NewTier)}
			if r.Cohort >= 0 {
				o.Cohort, o.Rank = &r.Cohort, &r.Rank
			}
			row, _ := json.Marshal(o)
			if size+len(row)+1 > podium.MaxFeedData {
				full = true
				d.Truncated++
				continue
			}
			size += len(row) + 1
			d.Outcomes = append(d.Outcomes, o)
		}
	}
	raw, _ := json.Marshal(d) // plain types: cannot fail
	return podium.FeedEvent{Board: def.ID, Seq: seq, Kind: podium.FeedLeagueSettled, At: now, Period: period, Data: raw}
}
