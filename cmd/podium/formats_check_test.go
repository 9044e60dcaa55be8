package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/scoring"
)

// The references and checks of TestClusterFormats.

// fmtRef is what the acknowledged submissions make a board: each
// player's keys, and for a best_k board the results kept.
type fmtRef struct {
	keys    []int64
	results []int64 // best_k: the kept results' times, best first
	seq     uint64  // best boards: the seq that set the entry (the tie-break)
}

// reference computes every board of the test from acks.
func fmtReference(acks []ack) map[string]map[string]fmtRef {
	vals := map[string]map[string][]ack{}
	for _, a := range acks {
		if vals[a.board] == nil {
			vals[a.board] = map[string][]ack{}
		}
		vals[a.board][a.player] = append(vals[a.board][a.player], a)
	}
	out := map[string]map[string]fmtRef{}
	for board, players := range vals {
		out[board] = map[string]fmtRef{}
		for p, list := range players {
			// Best first; an equal time keeps the earlier submission.
			slices.SortFunc(list, func(a, b ack) int {
				return cmp.Or(cmp.Compare(a.keys[0], b.keys[0]), cmp.Compare(a.seq, b.seq))
			})
			ref := fmtRef{keys: []int64{list[0].keys[0]}, seq: list[0].seq}
			if keep, ok := fmtBestK[board]; ok {
				for _, a := range list[:min(keep, len(list))] {
					ref.results = append(ref.results, a.keys[0])
				}
			}
			out[board][p] = ref
		}
	}
	// The three-level sum: only players with an entry on every source.
	out["sum3"] = map[string]fmtRef{}
	for p, e1 := range out["a1"] {
		e2, ok2 := out["a2"][p]
		e3, ok3 := out["a3"][p]
		if ok2 && ok3 {
			out["sum3"][p] = fmtRef{keys: []int64{e1.keys[0] + e2.keys[0] + e3.keys[0]}}
		}
	}
	// The best_k_sum: best k per source, missing ones filled.
	out["bk"] = map[string]fmtRef{}
	for _, s := range fmtBK {
		for p := range out[s.board] {
			out["bk"][p] = fmtRef{keys: []int64{0}}
		}
	}
	for p := range out["bk"] {
		var sum int64
		for _, s := range fmtBK {
			e, ok := out[s.board][p]
			kept := e.results
			if ok && kept == nil { // a best board: its entry
				kept = e.keys
			}
			n := min(int64(len(kept)), s.k)
			for _, v := range kept[:n] {
				sum += v
			}
			sum += (s.k - n) * s.fill
		}
		out["bk"][p] = fmtRef{keys: []int64{sum}}
	}
	return out
}

// fmtEntry is an entry as a node answers it.
type fmtEntry struct {
	Rank    int
	Player  string
	Keys    []int64
	Results []struct{ Keys []int64 }
}

// readBoard reads a whole board from a node: its entries, and the answer
// without its seq (to compare nodes).
func readBoard(base, board string) ([]fmtEntry, string, error) {
	code, body, _ := do(base, "GET", "/v1/boards/"+board+"/entries?limit=1000", "", "")
	if code != 200 {
		return nil, "", fmt.Errorf("entries of %s: %d %s", board, code, body)
	}
	var page struct{ Entries []fmtEntry }
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, "", err
	}
	var raw map[string]any
	json.Unmarshal(body, &raw)
	delete(raw, "seq")
	b, _ := json.Marshal(raw)
	return page.Entries, string(b), nil
}

// fmtString prints a board's entries, or a reference, by player.
func fmtString(m map[string]fmtRef) string {
	players := make([]string, 0, len(m))
	for p := range m {
		players = append(players, p)
	}
	slices.Sort(players)
	var b strings.Builder
	for _, p := range players {
		fmt.Fprintf(&b, "%s:%v", p, m[p].keys)
		if m[p].results != nil {
			fmt.Fprintf(&b, "%v", m[p].results)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

func entriesRef(es []fmtEntry, withResults bool) map[string]fmtRef {
	out := map[string]fmtRef{}
	for _, e := range es {
		ref := fmtRef{keys: e.Keys}
		if withResults {
			for _, res := range e.Results {
				ref.results = append(ref.results, res.Keys...)
			}
		}
		out[e.Player] = ref
	}
	return out
}

// caughtUp checks that the node at base holds at least what acks and
// solves make: every time on a board is the reference's or better (times
// only improve, on sources and on aggregates alike), and the contest has
// counted every solve.
func (r *fmtRun) caughtUp(base string, acks []ack, solves []contest.Solve) string {
	ref := fmtReference(acks)
	for _, board := range append(append([]string(nil), fmtSources...), "sum3", "bk", fmtTourney) {
		es, _, err := readBoard(base, board)
		if err != nil {
			return err.Error()
		}
		got := entriesRef(es, false)
		for p, want := range ref[board] {
			if g, ok := got[p]; !ok || g.keys[0] > want.keys[0] {
				return fmt.Sprintf("board %s player %s: %v, want %v or better (%d acknowledged submissions)", board, p, g.keys, want.keys, len(acks))
			}
		}
	}
	var last uint64
	for _, s := range solves {
		last = max(last, s.Seq)
	}
	code, body, _ := do(base, "GET", "/v1/contests/"+fmtContest+"/standings?view=live&limit=1", clusterKey, "")
	var st struct{ Seq uint64 }
	if json.Unmarshal(body, &st); code != 200 || st.Seq < last {
		return fmt.Sprintf("contest standings: %d %s, want seq %d or later", code, body, last)
	}
	return ""
}

// checkBoards: every node ends with every board equal to the reference,
// and all nodes answer the same, ranks and times included.
func (r *fmtRun) checkBoards() {
	ref := fmtReference(r.acks)
	boards := append(append([]string(nil), fmtSources...), "sum3", "bk", fmtTourney)
	for _, board := range boards {
		_, withResults := fmtBestK[board]
		want := fmtString(ref[board])
		var first string
		for i, nd := range r.c.nodes {
			eventually(r.t, 10*time.Second, "board "+board+" on "+nd.name, func() string {
				es, raw, err := readBoard(nd.url, board)
				if err != nil {
					return err.Error()
				}
				for j := 1; j < len(es); j++ {
					if es[j-1].Keys[0] > es[j].Keys[0] {
						return fmt.Sprintf("out of order at rank %d", j+1)
					}
				}
				if got := fmtString(entriesRef(es, withResults)); got != want {
					return fmt.Sprintf("\n got %s\nwant %s", got, want)
				}
				if i == 0 {
					first = raw
				} else if raw != first {
					return fmt.Sprintf("differs from %s:\n%s\n%s", r.c.nodes[0].name, clip(first), clip(raw))
				}
				return ""
			})
		}
	}
	if len(ref["sum3"]) == 0 || len(ref["bk"]) == 0 {
		r.t.Errorf("the load made no aggregate entries: sum3 %d, bk %d", len(ref["sum3"]), len(ref["bk"]))
	}
}

// feedIDs reads a feed from a node: its event ids, newest first, and the
// whole answer.
func feedIDs(base, query string) ([]string, []map[string]any, string, error) {
	code, body, _ := do(base, "GET", "/v1/feed?limit=1000"+query, "", "")
	if code != 200 {
		return nil, nil, "", fmt.Errorf("feed: %d %s", code, body)
	}
	var f struct{ Events []map[string]any }
	if err := json.Unmarshal(body, &f); err != nil {
		return nil, nil, "", err
	}
	var ids []string
	for _, ev := range f.Events {
		ids = append(ids, ev["id"].(string))
	}
	return ids, f.Events, string(body), nil
}

// checkFeed: every node serves the same feed; a1's events are those of a
// sequential replay of its acknowledged submissions (a personal best per
// improvement, a new #1 per change of leader), newest first.
func (r *fmtRun) checkFeed() {
	var list []ack
	for _, a := range r.acks {
		if a.board == "a1" {
			list = append(list, a)
		}
	}
	slices.SortFunc(list, func(a, b ack) int { return cmp.Compare(a.seq, b.seq) })
	type best struct {
		v   int64
		seq uint64
	}
	cur := map[string]best{}
	leader := ""
	var want []string
	for _, a := range list {
		v := a.keys[0]
		if b, ok := cur[a.player]; ok && v >= b.v {
			continue
		}
		cur[a.player] = best{v, a.seq}
		want = append(want, fmt.Sprintf("a1/%d/personal_best", a.seq))
		if leader != a.player && (leader == "" || v < cur[leader].v) {
			want = append(want, fmt.Sprintf("a1/%d/new_leader", a.seq))
			leader = a.player
		}
	}
	slices.Reverse(want) // newest first; at one seq, new_leader before personal_best
	for _, nd := range r.c.nodes {
		eventually(r.t, 10*time.Second, "feed of a1 on "+nd.name, func() string {
			ids, _, _, err := feedIDs(nd.url, "&board=a1")
			if err != nil {
				return err.Error()
			}
			if fmt.Sprint(ids) != fmt.Sprint(want) {
				return fmt.Sprintf("\n got %v\nwant %v", ids, want)
			}
			return ""
		})
	}
	// The whole feed, every node read in the same round (a settlement
	// may add events between rounds).
	eventually(r.t, 10*time.Second, "the same whole feed on every node", func() string {
		var first string
		for i, nd := range r.c.nodes {
			_, evs, body, err := feedIDs(nd.url, "")
			if err != nil {
				return err.Error()
			}
			if len(evs) == 0 {
				return "empty on " + nd.name
			}
			if i == 0 {
				first = body
			} else if body != first {
				return fmt.Sprintf("%s and %s differ:\n%s\n%s", r.c.nodes[0].name, nd.name, clip(first), clip(body))
			}
		}
		return ""
	})
}

// clip shortens an answer for a failure message.
func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}

// fmtPlace is a tournament player's final place.
type fmtPlace struct {
	Player string `json:"player"`
	Rank   int64  `json:"rank"`
	Points int64  `json:"points"`
}

// tourneyRef is the tournament's final ranking by the reference: best
// time, then who reached it first.
func (r *fmtRun) tourneyRef() []fmtPlace {
	ref := fmtReference(r.acks)[fmtTourney]
	var out []fmtPlace
	for p := range ref {
		out = append(out, fmtPlace{Player: p})
	}
	slices.SortFunc(out, func(a, b fmtPlace) int {
		ea, eb := ref[a.Player], ref[b.Player]
		return cmp.Or(cmp.Compare(ea.keys[0], eb.keys[0]), cmp.Compare(ea.seq, eb.seq))
	})
	for i := range out {
		out[i].Rank = int64(i + 1)
		out[i].Points = scoring.RankPoints(fmtWeight, out[i].Rank)
	}
	return out
}

type fmtSettlement struct {
	State      string
	Settlement *struct {
		Runs, Players, Paid int64
		Node                string
	}
}

// checkTournament: the tournament is settled once, every node says so,
// the payouts and every points board are the reference's, and one
// tournament_settled event is in the feed.
func (r *fmtRun) checkTournament() {
	t := r.t
	places := r.tourneyRef()
	if len(places) == 0 {
		t.Fatal("the tournament got no score")
	}
	var paid int64
	for _, p := range places {
		paid += p.Points
	}
	h := int64(podium.DefaultHalfLifeDays) * 24 * 3600 * 1000
	end := podium.Millis(r.tourneyEnd)
	era := scoring.Era(end, h)
	points := map[string]map[string]fmtRef{"pts:total": {}, "pts:weekly": {}, "pts:best": {}, "pts:current": {}}
	for _, p := range places {
		points["pts:total"][p.Player] = fmtRef{keys: []int64{p.Points}}
		points["pts:weekly"][p.Player] = fmtRef{keys: []int64{p.Points}}
		points["pts:best"][p.Player] = fmtRef{keys: []int64{p.Rank}}
		points["pts:current"][p.Player] = fmtRef{keys: []int64{era, scoring.Scaled(p.Points, end, era, h)}}
	}
	for _, nd := range r.c.nodes {
		eventually(t, 5*time.Second, "settlement on "+nd.name, func() string {
			_, b, _ := do(nd.url, "GET", "/v1/tournaments/"+fmtTourney, "", "")
			var st fmtSettlement
			json.Unmarshal(b, &st)
			if st.State != "settled" || st.Settlement == nil {
				return string(b)
			}
			if s := st.Settlement; s.Runs != 1 || s.Players != int64(len(places)) || s.Paid != paid {
				t.Fatalf("settlement on %s: %s, want 1 run, %d players, %d paid", nd.name, b, len(places), paid)
			}
			if nd == r.c.nodes[0] {
				t.Logf("settled by %s: %d players, %d points", st.Settlement.Node, len(places), paid)
			}
			return ""
		})
		_, b, _ := do(nd.url, "GET", "/v1/tournaments/"+fmtTourney+"/payouts?limit=1000", "", "")
		var pay struct{ Payouts []fmtPlace }
		json.Unmarshal(b, &pay)
		if fmt.Sprint(pay.Payouts) != fmt.Sprint(places) {
			t.Errorf("payouts on %s:\n got %v\nwant %v", nd.name, pay.Payouts, places)
		}
		for board, want := range points {
			eventually(t, 10*time.Second, board+" on "+nd.name, func() string {
				es, _, err := readBoard(nd.url, board)
				if err != nil {
					return err.Error()
				}
				if got, want := fmtString(entriesRef(es, false)), fmtString(want); got != want {
					return fmt.Sprintf("\n got %s\nwant %s", got, want)
				}
				return ""
			})
		}
		// The window is over on every node: a score is refused, and
		// changes nothing.
		code, b, _ := do(nd.url, "POST", "/v1/boards/"+fmtTourney+"/scores", clusterKey, `{"player":"late","keys":[1]}`)
		if code != 409 || errCode(b) != "tournament_closed" {
			t.Errorf("a score after the end on %s: %d %s", nd.name, code, b)
		}
	}
	r.checkSettledEvent(places, paid)
}

// checkSettledEvent: every node's feed of the tournament holds one
// tournament_settled event, of run 1, with the reference's top places.
func (r *fmtRun) checkSettledEvent(places []fmtPlace, paid int64) {
	top := places[:min(10, len(places))]
	for _, nd := range r.c.nodes {
		eventually(r.t, 10*time.Second, "tournament_settled on "+nd.name, func() string {
			_, evs, _, err := feedIDs(nd.url, "&board="+fmtTourney)
			if err != nil {
				return err.Error()
			}
			var settled []map[string]any
			for _, ev := range evs {
				if ev["kind"] == "tournament_settled" {
					settled = append(settled, ev)
				}
			}
			if len(settled) != 1 {
				return fmt.Sprintf("%d tournament_settled events: %v", len(settled), settled)
			}
			b, _ := json.Marshal(settled[0]["data"])
			var data struct {
				Run, Players, Paid int64
				Top                []fmtPlace
			}
			json.Unmarshal(b, &data)
			if data.Run != 1 || data.Players != int64(len(places)) || data.Paid != paid || fmt.Sprint(data.Top) != fmt.Sprint(top) {
				r.t.Fatalf("tournament_settled on %s: %s, want run 1, %d players, %d paid, top %v", nd.name, b, len(places), paid, top)
			}
			return ""
		})
	}
}

// standingLine is a line of the standings as a node answers it.
type standingLine struct {
	Rank        int        `json:"rank"`
	Team        string     `json:"team"`
	Score       int64      `json:"score"`
	Solved      int        `json:"solved"`
	LastSolveAt *time.Time `json:"last_solve_at"`
}

// ctftimeLine is a line of the CTFtime export.
type ctftimeLine struct {
	Pos       int    `json:"pos"`
	Team      string `json:"team"`
	Score     int64  `json:"score"`
	TaskStats map[string]struct {
		Points int64 `json:"points"`
		Time   int64 `json:"time"`
	} `json:"taskStats"`
	LastAccept int64 `json:"lastAccept"`
}

type ctftimeExport struct {
	Tasks     []string      `json:"tasks"`
	Standings []ctftimeLine `json:"standings"`
}

// contestWant is what a node must answer for a view: the standings and
// the CTFtime export, computed by contest.Compute from the solves.
func (r *fmtRun) contestWant(cutoff time.Time) ([]standingLine, []ctftimeLine, []string) {
	solves := slices.Clone(r.solves)
	slices.SortFunc(solves, func(a, b contest.Solve) int { return cmp.Compare(a.Seq, b.Seq) })
	chs := slices.Clone(r.challenges)
	slices.SortFunc(chs, func(a, b contest.Challenge) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.ID, b.ID))
	})
	st := contest.Compute(contest.Input{Contest: &r.contest, Challenges: chs, Solves: solves, Cutoff: cutoff})
	names := map[string]string{}
	var tasks []string
	for _, ch := range chs {
		names[ch.ID] = ch.Name
		tasks = append(tasks, ch.Name)
	}
	lines := []standingLine{} // the API answers [] for none, never null
	export := []ctftimeLine{}
	for _, tm := range st.Teams {
		l := standingLine{Rank: tm.Rank, Team: tm.Team, Score: tm.Score, Solved: tm.Solved}
		if !tm.LastAt.IsZero() {
			at := tm.LastAt
			l.LastSolveAt = &at
		}
		lines = append(lines, l)
		c := ctftimeLine{Pos: tm.Rank, Team: tm.Team, Score: tm.Score, TaskStats: map[string]struct {
			Points int64 `json:"points"`
			Time   int64 `json:"time"`
		}{}}
		for _, a := range tm.Awards {
			c.TaskStats[names[a.Challenge]] = struct {
				Points int64 `json:"points"`
				Time   int64 `json:"time"`
			}{a.Points, a.At.Unix()}
			c.LastAccept = max(c.LastAccept, a.At.Unix())
		}
		export = append(export, c)
	}
	return lines, export, tasks
}

// checkContest: each pair solved once, the others 409; the solves are
// numbered without gaps; the standings and the CTFtime export, public
// (frozen) and live, are the reference's on every node and the same on
// all; the audit log holds every acknowledged attempt once.
func (r *fmtRun) checkContest() {
	t := r.t
	for p, outs := range r.attempts {
		solved := 0
		for _, o := range outs {
			if o == "solved" {
				solved++
			}
		}
		if solved != 1 || len(r.solvedBy[p]) != 1 {
			t.Errorf("pair %v: outcomes %v, solve seqs %v: want one solved and the others 409", p, outs, r.solvedBy[p])
		}
	}
	seqs := make([]uint64, 0, len(r.solves))
	for _, s := range r.solves {
		seqs = append(seqs, s.Seq)
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("solve seqs %v: not 1..%d without gaps", seqs, len(seqs))
		}
	}
	if r.contest.Freeze == nil {
		t.Fatal("the contest has no freeze")
	}
	before := 0
	for _, s := range r.solves {
		if s.At.Before(*r.contest.Freeze) {
			before++
		}
	}
	t.Logf("%d of %d solves before the freeze", before, len(r.solves))
	views := []struct {
		name, key string
		cutoff    time.Time
	}{{"live", clusterKey, time.Time{}}, {"public", "", *r.contest.Freeze}}
	for _, v := range views {
		lines, export, tasks := r.contestWant(v.cutoff)
		wantLines, _ := json.Marshal(lines)
		wantExport, _ := json.Marshal(ctftimeExport{Tasks: tasks, Standings: export})
		firsts := map[string]string{}
		for _, nd := range r.c.nodes {
			eventually(t, 10*time.Second, v.name+" standings on "+nd.name, func() string {
				code, body, _ := do(nd.url, "GET", "/v1/contests/"+fmtContest+"/standings?limit=1000&view="+v.name, v.key, "")
				var page struct {
					Frozen    bool
					Standings []standingLine
				}
				if err := json.Unmarshal(body, &page); code != 200 || err != nil {
					return fmt.Sprintf("%d %s", code, body)
				}
				if got, _ := json.Marshal(page.Standings); string(got) != string(wantLines) {
					return fmt.Sprintf("\n got %s\nwant %s", clip(string(got)), clip(string(wantLines)))
				}
				if page.Frozen != (v.name == "public") {
					return fmt.Sprintf("frozen %t in the %s view", page.Frozen, v.name)
				}
				code, export, _ := do(nd.url, "GET", "/v1/contests/"+fmtContest+"/ctftime", v.key, "")
				var parsed ctftimeExport
				if err := json.Unmarshal(export, &parsed); code != 200 || err != nil {
					return fmt.Sprintf("ctftime: %d %s", code, export)
				}
				if got, _ := json.Marshal(parsed); string(got) != string(wantExport) {
					return fmt.Sprintf("ctftime\n got %s\nwant %s", clip(string(got)), clip(string(wantExport)))
				}
				for what, b := range map[string][]byte{"standings": body, "ctftime": export} {
					if f, ok := firsts[what]; !ok {
						firsts[what] = string(b)
					} else if f != string(b) {
						return fmt.Sprintf("%s differ between nodes:\n%s\n%s", what, clip(f), clip(string(b)))
					}
				}
				return ""
			})
		}
	}
	for _, nd := range r.c.nodes {
		code, body, _ := do(nd.url, "GET", "/v1/contests/"+fmtContest+"/attempts?limit=1000", clusterKey, "")
		var log struct {
			Attempts []struct {
				ID     int64
				Result string
				Seq    uint64
			}
		}
		json.Unmarshal(body, &log)
		solved, wrong, dups := 0, 0, 0
		for _, a := range log.Attempts {
			switch {
			case a.Result == "solved":
				solved++
			case a.Result == "wrong" && r.wrong[a.ID]:
				wrong++
			case a.Result == "duplicate":
				dups++
			}
		}
		if code != 200 || solved != len(r.solves) || wrong != len(r.wrong) || dups != r.dups || len(log.Attempts) != solved+wrong+dups {
			t.Errorf("audit log on %s: %d, %d attempts: %d solved (want %d), %d wrong (want %d), %d duplicates (want %d)",
				nd.name, code, len(log.Attempts), solved, len(r.solves), wrong, len(r.wrong), dups, r.dups)
		}
	}
}
