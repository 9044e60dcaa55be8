package engine

import (
	crand "crypto/rand"
	"encoding/binary"
	"strconv"

	"github.com/podiumhq/podium"
)

// ETags of ranking pages. A page's content is fixed by the board's
// incarnation (gen), its applied seq, the period read, the registered
// players (names, hidden flags) and its rank_style, given the request's
// URL (offset, limit, include_hidden, top_percent). The tag holds all of
// them plus a nonce of this process, so that a restart, another node or
// another binary never matches a tag it did not make. Every change moves
// one of them after it is applied (seq under the board's lock; players.ver
// after a player's change is installed; the definition's style with the
// definition the read used), and the tag is read before the answer, so a
// stored answer is never older than its tag: If-None-Match can only match
// an answer that is still current. Current points boards decay with the clock: no tag.

// processNonce tells this process's tags from any other's.
var processNonce = func() uint64 {
	var b [8]byte
	crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}()

// tag returns the ETag of a page of period on bs, whose players are at
// version players (players.ver); the caller holds bs.mu for reading. now
// is read only for a board with retention.
func (bs *BoardState) tag(def *podium.Board, period string, players uint64, now podium.Clock) string {
	if def.Points != nil || def.Retains() && def.PeriodExpired(now(), period) {
		// A period past keep_periods (retention.go) turns empty without
		// moving seq: its empty answer carries no tag, so that no 304
		// confirms a page cached before and no cache keeps it.
		return ""
	}
	b := make([]byte, 0, 80)
	b = append(b, `W/"`...)
	b = strconv.AppendUint(b, processNonce, 36)
	b = append(b, '.')
	b = strconv.AppendUint(b, bs.gen, 36)
	b = append(b, '.')
	b = strconv.AppendUint(b, bs.seq, 36)
	b = append(b, '.')
	b = strconv.AppendUint(b, players, 36)
	b = append(b, '.')
	b = append(b, period...)
	if def.ReportsShared() {
		// rank_style changes the answers without moving seq: the
		// tag names the style so a page cached under the other one is
		// never served.
		b = append(b, ".s"...)
	}
	return string(append(b, '"'))
}

// PageTag returns the ETag a top page of q would carry now, without
// reading it ("" when it has none, or its period is not in memory).
func (e *Engine) PageTag(q Query) string {
	bs := e.board(q.Board)
	if bs == nil {
		return ""
	}
	def := bs.def.Load()
	period, err := e.ResolvePeriod(def, q.Period)
	if err != nil {
		return ""
	}
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	if _, ok := bs.periods[period]; !ok {
		if _, known := bs.known[period]; known {
			return "" // not loaded: the read loads it
		}
	}
	return bs.tag(def, period, e.players.ver.Load(), e.now)
}
