package http

import (
	"strconv"

	"github.com/podiumhq/podium"
)

// The JSON of best_k and aggregate boards: a board's keep and aggregate
// fields, an entry's kept results.

// appendFormat appends ,"keep":k for a best_k board and ,"aggregate":{...}
// for an aggregate board; nothing for other boards.
func appendFormat(b []byte, bd *podium.Board) []byte {
	if bd.Mode == podium.BestK {
		b = append(b, `,"keep":`...)
		b = strconv.AppendInt(b, int64(bd.Keep), 10)
	}
	a := bd.Aggregate
	if a == nil {
		return b
	}
	b = append(b, `,"aggregate":{"kind":`...)
	b = appendString(b, string(a.Kind))
	b = append(b, `,"sources":[`...)
	for i, s := range a.Sources {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"board":`...)
		b = appendString(b, s.Board)
		if a.Kind == podium.BestKSum {
			b = append(b, `,"k":`...)
			b = strconv.AppendInt(b, int64(s.K), 10)
			b = append(b, `,"fill":`...)
			b = appendKeys(b, s.Fill)
		}
		b = append(b, '}')
	}
	b = append(b, `],"require_all":`...)
	b = strconv.AppendBool(b, a.RequireAll)
	return append(b, '}')
}

// appendResults appends ,"results":[{"keys":[...],"at":"..."},...], best
// first, for an entry that keeps results (a best_k board).
func appendResults(b []byte, rs []podium.Result) []byte {
	if len(rs) == 0 {
		return b
	}
	b = append(b, `,"results":[`...)
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"keys":`...)
		b = appendKeys(b, rs[i].Keys)
		b = append(b, `,"at":`...)
		b = appendTime(b, rs[i].At)
		b = append(b, '}')
	}
	return append(b, ']')
}
