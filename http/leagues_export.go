package http

import (
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
)

// GET /v1/leagues/{board}/export?part=periods|results|tiers&period=&after=&limit=
// (docs/API.md, "Restore a league"): a league's settled history and
// tiers, one page a call, so that what a call holds is bounded by its
// page and not by the league (1M players and 52 settled weeks are 52M
// result rows). The rows are those POST /v1/leagues/{board}/restore
// takes; a page is read whole before its first byte is written, so a
// storage failure is a 503, never a cut page.
//
// Without part the route answers the whole export as JSON Lines, as it
// did before it was paged, for a league of at most maxLeagueExportWhole
// rows; a larger one is 413, naming the pages.

const (
	leagueExportLimit    = 1000  // a page's rows by default
	maxLeagueExportLimit = 10000 // a page's rows at most: ≈ 4 MiB of results with 128-byte ids
	// maxLeagueExportWhole bounds the answer without part, held whole.
	maxLeagueExportWhole = maxLeagueExportLimit
)

// GET /v1/leagues/{board}/export: scope admin on the board.
func (s *leagueHandlers) exportLeague(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	part, _ := queryValue(r, "part")
	period, hasPeriod := queryValue(r, "period")
	after, _ := queryValue(r, "after")
	limit, err := queryInt(r, "limit", leagueExportLimit, 1, maxLeagueExportLimit)
	if err != nil {
		return err
	}
	switch part {
	case "", "periods", "tiers":
		if hasPeriod {
			return podium.Errorf(podium.ECodeInvalid, "period is for part=results only")
		}
	case "results":
		if period == "" || len(period) > 64 {
			return podium.Errorf(podium.ECodeInvalid, "part=results needs period, a settled period of the league (part=periods lists them)")
		}
	default:
		return podium.Errorf(podium.ECodeInvalid, "part must be periods, results or tiers (or absent: the whole export, for a small league)")
	}
	if part == "" && (after != "" || r.URL.Query().Has("limit")) {
		return podium.Errorf(podium.ECodeInvalid, "after and limit page a part: pass part=periods, results or tiers")
	}
	if after != "" && part != "periods" {
		if err := podium.ValidPlayerRef(after); err != nil {
			return podium.Errorf(podium.ECodeInvalid, "after must be the previous page's next_after, a player id of 1 to %d bytes of text", podium.MaxPlayerIDLen)
		}
	}
	mv, err := s.mover()
	if err != nil {
		return err
	}
	bi, _, err := s.readableBoard(r, id)
	if err != nil {
		return err
	}
	l := bi.League
	if l == nil {
		return podium.Errorf(podium.ECodeNotFound, "board %q is not a league", id)
	}
	name := func(t int) string { return l.Tiers[min(max(t, 0), len(l.Tiers)-1)].Name }
	ctx := r.Context()
	if part == "" {
		return s.exportWhole(w, r, mv, id, name)
	}
	b := []byte(`{"board":`)
	b = appendString(b, id)
	b = append(b, `,"part":`...)
	b = appendString(b, part)
	next := ""
	switch part {
	case "periods":
		ps, err := mv.Settled(ctx, id)
		if err != nil {
			return err
		}
		from := 0
		if after != "" {
			from = -1
			for i := range ps {
				if ps[i].Period == after {
					from = i + 1
				}
			}
			if from < 0 {
				return podium.Errorf(podium.ECodeInvalid, "after %q is not a settled period of league %q: pass the previous page's next_after", after, id)
			}
		}
		ps = ps[from:]
		if len(ps) > limit {
			ps = ps[:limit]
			next = ps[limit-1].Period
		}
		b = append(b, `,"periods":[`...)
		for i := range ps {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSettledRow(append(b, '{'), &ps[i])
			b = append(b, '}')
		}
	case "results":
		ps, err := mv.Settled(ctx, id)
		if err != nil {
			return err
		}
		settled := false
		for i := range ps {
			settled = settled || ps[i].Period == period
		}
		if !settled {
			return podium.Errorf(podium.ECodeNotFound, "league %q has no settled period %q (part=periods lists them)", id, period)
		}
		// One row more than the page says whether another follows.
		rs, err := mv.ResultsPage(ctx, id, period, after, limit+1)
		if err != nil {
			return err
		}
		if len(rs) > limit {
			rs = rs[:limit]
			next = rs[limit-1].Player
		}
		b = append(b, `,"period":`...)
		b = appendString(b, period)
		b = append(b, `,"results":[`...)
		for i := range rs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendResultRow(append(b, '{'), &rs[i], name)
			b = append(b, '}')
		}
	case "tiers":
		ts, err := mv.TiersPage(ctx, id, after, limit+1)
		if err != nil {
			return err
		}
		if len(ts) > limit {
			ts = ts[:limit]
			next = ts[limit-1].Player
		}
		b = append(b, `,"tiers":[`...)
		for i, t := range ts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendTierRow(append(b, '{'), t, name)
			b = append(b, '}')
		}
	}
	b = append(b, `],"next_after":`...)
	if next == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, next)
	}
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

// exportWhole answers the export without part: JSON Lines, the tiers,
// then each settled period followed by its results, read whole and so
// refused past maxLeagueExportWhole rows. The periods are read before and
// after the tiers: a settlement in between would pair tiers with a
// history that does not lead to them, so the read is retried.
func (s *leagueHandlers) exportWhole(w http.ResponseWriter, r *http.Request, mv leagueMover, id string, name func(int) string) error {
	ctx := r.Context()
	tooLarge := func() error {
		return podium.Errorf(podium.ECodeTooLarge, "league %q has more than %d rows to export in one answer: read it a page at a time with ?part=periods, results and tiers",
			id, maxLeagueExportWhole)
	}
	var ps []podium.LeaguePeriod
	var ts []podium.LeagueTierOf
	for try := 1; ; try++ {
		before, err := mv.Settled(ctx, id)
		if err != nil {
			return err
		}
		if ts, err = mv.TiersPage(ctx, id, "", maxLeagueExportWhole+1); err != nil {
			return err
		}
		if ps, err = mv.Settled(ctx, id); err != nil {
			return err
		}
		if len(before) == len(ps) {
			break
		}
		if try == 3 {
			return podium.Errorf(podium.ECodeUnavailable, "league %q settled periods during each of 3 reads; retry shortly", id)
		}
	}
	n := len(ts) + len(ps)
	if n > maxLeagueExportWhole {
		return tooLarge()
	}
	var b []byte
	for _, t := range ts {
		b = append(b, `{"league_tier":{"board":`...)
		b = appendString(b, id)
		b = appendTierRow(append(b, ','), t, name)
		b = append(b, "}}\n"...)
	}
	for i := range ps {
		p := &ps[i]
		rs, err := mv.ResultsPage(ctx, id, p.Period, "", maxLeagueExportWhole-n+1)
		if err != nil {
			return err
		}
		if n += len(rs); n > maxLeagueExportWhole {
			return tooLarge()
		}
		b = append(b, `{"league_period":{"board":`...)
		b = appendString(b, id)
		b = appendSettledRow(append(b, ','), p)
		b = append(b, "}}\n"...)
		for j := range rs {
			b = append(b, `{"league_result":{"board":`...)
			b = appendString(b, id)
			b = append(b, `,"period":`...)
			b = appendString(b, p.Period)
			b = appendResultRow(append(b, ','), &rs[j], name)
			b = append(b, "}}\n"...)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/jsonl; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+id+`-league.jsonl"`)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

// appendTierRow appends a tier row's fields (no braces).
func appendTierRow(b []byte, t podium.LeagueTierOf, name func(int) string) []byte {
	b = append(b, `"player":`...)
	b = appendString(b, t.Player)
	b = append(b, `,"tier":`...)
	return appendString(b, name(t.Tier))
}

// appendSettledRow appends a settled period row's fields (no braces).
func appendSettledRow(b []byte, p *podium.LeaguePeriod) []byte {
	b = append(b, `"period":`...)
	b = appendString(b, p.Period)
	b = append(b, `,"start":`...)
	b = appendTime(b, p.Start)
	b = append(b, `,"settled_at":`...)
	b = appendTime(b, p.SettledAt)
	b = append(b, `,"players":`...)
	b = strconv.AppendInt(b, p.Players, 10)
	b = append(b, `,"promoted":`...)
	b = strconv.AppendInt(b, p.Promoted, 10)
	b = append(b, `,"relegated":`...)
	return strconv.AppendInt(b, p.Relegated, 10)
}

// appendResultRow appends a result row's fields (no braces): cohort
// and rank are null for an absent player.
func appendResultRow(b []byte, x *podium.LeagueResult, name func(int) string) []byte {
	b = append(b, `"player":`...)
	b = appendString(b, x.Player)
	b = append(b, `,"tier":`...)
	b = appendString(b, name(x.Tier))
	if x.Cohort < 0 {
		b = append(b, `,"cohort":null,"rank":null`...)
	} else {
		b = append(b, `,"cohort":`...)
		b = strconv.AppendInt(b, int64(x.Cohort), 10)
		b = append(b, `,"rank":`...)
		b = strconv.AppendInt(b, int64(x.Rank), 10)
	}
	b = append(b, `,"outcome":`...)
	b = appendString(b, x.Outcome)
	b = append(b, `,"new_tier":`...)
	return appendString(b, name(x.NewTier))
}
