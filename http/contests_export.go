package http

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/internal/csvcell"
)

// exportContest streams a contest's standings as CSV or JSON Lines:
//
//	GET /v1/contests/{contest}/export?format=csv|jsonl&view=&include_hidden=
//
// The standings are one immutable computation (the same the standings
// read pages through), so an export is always consistent; it is written
// exportChunk teams at a time, with memory bounded by a chunk.
func (s *contestHandlers) exportContest(w http.ResponseWriter, r *http.Request) error {
	c, k, err := s.contestFor(r)
	if err != nil {
		return err
	}
	view, err := s.contestView(r, &c, k, false)
	if err != nil {
		return err
	}
	format, _ := queryValue(r, "format")
	switch format {
	case "":
		format = "csv"
	case "csv", "jsonl":
	default:
		return podium.Errorf(podium.ECodeInvalid, "format must be csv or jsonl")
	}
	hidden, err := queryBool(r, "include_hidden")
	if err != nil {
		return err
	}
	if hidden && view != ctf.Live {
		return podium.Errorf(podium.ECodeForbidden, "include_hidden needs the live view (an admin key)")
	}
	b, err := s.contests.Standings(c.ID, view)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Disposition", `attachment; filename="`+exportName(c.ID, "standings-"+viewName(view), format)+`"`)
	h.Set("Podium-Seq", strconv.FormatUint(b.Standings.Seq, 10))
	h.Set("Cache-Control", "no-store")
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if format == "jsonl" {
		h.Set("Content-Type", "application/jsonl; charset=utf-8")
		head, err := json.Marshal(map[string]any{"export": "podium.standings", "contest": c.ID, "view": viewName(view),
			"frozen": b.Frozen, "cutoff": jt(b.Standings.Cutoff), "seq": b.Standings.Seq})
		if err != nil {
			return err
		}
		buf.Write(append(head, '\n'))
	} else {
		h.Set("Content-Type", "text/csv; charset=utf-8")
		cols := []string{"rank", "team", "name", "score", "solved", "last_solve_at"}
		if hidden {
			cols = append(cols, "hidden")
		}
		cw.Write(cols)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func() bool {
		cw.Flush()
		rc.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		return err == nil
	}
	n := 0
	var row []string
	for i := range b.Standings.Teams {
		t := &b.Standings.Teams[i]
		if t.Hidden && !hidden {
			continue
		}
		n++
		out := s.standingOut(t, false)
		if format == "jsonl" {
			line, err := json.Marshal(out)
			if err != nil {
				return nil
			}
			buf.Write(append(line, '\n'))
		} else {
			rank := ""
			if out.Rank != nil {
				rank = strconv.Itoa(*out.Rank)
			}
			last := ""
			if !t.LastAt.IsZero() {
				last = t.LastAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
			}
			row = append(row[:0], rank, csvcell.Escape(out.Team), csvcell.Escape(out.Name), strconv.FormatInt(out.Score, 10), strconv.Itoa(out.Solved), last)
			if hidden {
				row = append(row, strconv.FormatBool(out.Hidden))
			}
			cw.Write(row)
		}
		if n%exportChunk == 0 && !write() {
			return nil
		}
	}
	if format == "jsonl" {
		buf.WriteString(`{"end":true,"teams":` + strconv.Itoa(n) + "}\n")
	}
	write()
	return nil
}
