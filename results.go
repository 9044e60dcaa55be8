package podium

import (
	"encoding/json"
	"fmt"
	"time"
)

// Boards in mode best_k keep each player's best k results, not only the
// best one. The entry ranks by the best of them (its Keys, At and Seq are
// the best result's, so the usual tie-break holds: whoever reached that
// value first); Results holds all of them, best first. They are durable
// (the entries' results column) and recomputed from the log like any
// entry.

// MaxKeep is the largest k of a best_k board.
const MaxKeep = 100

// Result is one kept result of a best_k board: the submitted keys, when
// and by which submission.
type Result struct {
	Keys []int64
	At   time.Time
	Seq  uint64
}

// applyBestK inserts a submission into the player's kept results. A
// submission whose seq is not above every kept result's is already
// reflected (a replay over an entry checkpointed ahead of its watermark):
// a result only ever leaves the list for a later, better one, so skipping
// it is exact.
func applyBestK(b *Board, cur *Entry, s *Submission) (Entry, bool) {
	orders := b.Orders()
	nr := Result{Keys: append([]int64(nil), s.Keys...), At: s.At, Seq: s.Seq}
	var old []Result
	if cur != nil {
		old = cur.Results
		for i := range old {
			if old[i].Seq >= s.Seq {
				return *cur, false
			}
		}
		if len(old) == 0 { // an entry stored before the board kept results
			old = []Result{{Keys: cur.Keys, At: cur.At, Seq: cur.Seq}}
		}
	}
	pos := len(old)
	for i := range old {
		if CompareRank(orders, nr.Keys, Millis(nr.At), nr.Seq, old[i].Keys, Millis(old[i].At), old[i].Seq) < 0 {
			pos = i
			break
		}
	}
	if pos >= b.Keep {
		return *cur, false
	}
	res := make([]Result, 0, min(len(old)+1, b.Keep))
	res = append(res, old[:pos]...)
	res = append(res, nr)
	// The kept results are copies: the entry must not share keys with cur.
	for i := pos; i < len(old) && len(res) < b.Keep; i++ {
		res = append(res, old[i])
	}
	for i := range res {
		if i != pos {
			res[i].Keys = append([]int64(nil), res[i].Keys...)
		}
	}
	best := res[0]
	next := Entry{Board: s.Board, Period: s.Period, Player: s.Player, Keys: append([]int64(nil), best.Keys...),
		At: best.At, Seq: best.Seq, Results: res}
	if pos == 0 || cur == nil {
		next.Meta = s.Meta
	} else {
		next.Meta = cur.Meta
	}
	return next, true
}

func copyResult(r Result) Result {
	r.Keys = append([]int64(nil), r.Keys...)
	return r
}

// CopyResults returns a deep copy of rs (nil for none).
func CopyResults(rs []Result) []Result {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Result, len(rs))
	for i := range rs {
		out[i] = copyResult(rs[i])
	}
	return out
}

// EqualResults reports whether two result lists are the same.
func EqualResults(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || Millis(a[i].At) != Millis(b[i].At) || len(a[i].Keys) != len(b[i].Keys) {
			return false
		}
		for j := range a[i].Keys {
			if a[i].Keys[j] != b[i].Keys[j] {
				return false
			}
		}
	}
	return true
}

// storedResult is one result as stores keep it, in the entries' results
// column: readable JSON, for people and audits.
type storedResult struct {
	Keys []int64 `json:"keys"`
	At   int64   `json:"at"`
	Seq  uint64  `json:"seq"`
}

// EncodeResults returns results as stores keep them: nil (NULL) for none,
// else a JSON array of {"keys":[...],"at":ms,"seq":n}, best first.
func EncodeResults(rs []Result) []byte {
	if len(rs) == 0 {
		return nil
	}
	out := make([]storedResult, len(rs))
	for i, r := range rs {
		out[i] = storedResult{Keys: r.Keys, At: Millis(r.At), Seq: r.Seq}
	}
	b, _ := json.Marshal(out) // cannot fail: ints only
	return b
}

// DecodeResults is the inverse of EncodeResults (nil or empty: none).
func DecodeResults(b []byte) ([]Result, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var in []storedResult
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("malformed results: %w", err)
	}
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]Result, len(in))
	for i, r := range in {
		if len(r.Keys) < 1 || len(r.Keys) > MaxKeys {
			return nil, fmt.Errorf("malformed results: result %d has %d keys", i, len(r.Keys))
		}
		out[i] = Result{Keys: r.Keys, At: FromMillis(r.At), Seq: r.Seq}
	}
	return out, nil
}
