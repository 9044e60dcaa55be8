package http

import (
	"context"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
)

// A player's log rows on a board: GET .../entries/{player}/history, and the
// rows a review item shows (review.go). The review module (review/) reads
// them.

// historyReader reads a player's log rows.
type historyReader interface {
	History(ctx context.Context, board, player string, before uint64, limit int) (rows []podium.HistoryRow, resume uint64, err error)
}

// appendHistory appends log rows; admin adds the review item whose
// approval wrote each row.
func appendHistory(b []byte, rows []podium.HistoryRow, admin bool) []byte {
	b = append(b, '[')
	for i := range rows {
		h := &rows[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendUint(b, h.Seq, 10)
		b = append(b, `,"period":`...)
		b = appendString(b, h.Period)
		b = append(b, `,"kind":`...)
		switch h.Kind {
		case podium.KindDelete:
			b = appendString(b, "delete")
		case podium.KindRestore: // restore.go: at is the restored entry's own time
			b = appendString(b, "restore")
			b = append(b, `,"keys":`...)
			b = appendKeys(b, h.Keys)
		default:
			b = appendString(b, "score")
			b = append(b, `,"keys":`...)
			b = appendKeys(b, h.Keys)
		}
		b = append(b, `,"at":`...)
		b = appendTime(b, h.At)
		b = append(b, `,"meta":`...)
		b = appendMeta(b, h.Meta)
		if admin {
			b = append(b, `,"review":`...)
			if h.ReviewID == "" {
				b = append(b, "null"...)
			} else {
				b = append(b, `{"id":`...)
				b = appendString(b, h.ReviewID)
				b = append(b, `,"held":true,"status":"approved"}`...)
			}
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// history answers GET /v1/boards/{board}/entries/{player}/history: the
// player's log rows, newest first. A public board's history is public; a
// private board's needs a key that may read it, or the player's own
// session on a board that takes player submissions; to anyone else the
// board is unknown (auth.go, "Private ids"). Admins (and review keys) also
// see which rows an approval wrote.
func (s *entryHandlers) history(w http.ResponseWriter, r *http.Request) error {
	player := r.PathValue("player")
	if err := podium.ValidPlayerRef(player); err != nil {
		return err
	}
	k, err := s.principal(r)
	if err != nil {
		return err
	}
	bi, err := s.eng.Board(r.PathValue("board"))
	if err != nil {
		return err
	}
	switch {
	case bi.Public:
	case k != nil && k.Player != "": // a player session
		if k.Player != player || !bi.PlayerSubmit {
			return podium.BoardNotFound(bi.ID)
		}
	case !mayRead(k, bi.ID, bi.Public):
		return podium.BoardNotFound(bi.ID)
	}
	admin := k != nil && k.Player == "" && k.Allows(podium.ScopeReview, bi.ID)
	var before uint64
	if c, ok := queryValue(r, "cursor"); ok {
		if before, err = strconv.ParseUint(c, 10, 63); err != nil || before == 0 {
			return podium.Errorf(podium.ECodeInvalid, "cursor is not one this API returned")
		}
	}
	limit, err := queryInt(r, "limit", 20, 1, podium.MaxReviewPageLimit)
	if err != nil {
		return err
	}
	// A board without the player index is read by scanning its log a
	// stretch at a time; a page takes up to historyScans stretches, then
	// answers what it found with a cursor where it stopped.
	var rows []podium.HistoryRow
	var resume uint64
	for range historyScans {
		got, next, err := s.hist.History(r.Context(), bi.ID, player, before, limit+1-len(rows))
		if err != nil {
			return err
		}
		rows, resume, before = append(rows, got...), next, next
		if resume == 0 || len(rows) > limit {
			break
		}
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		next = strconv.FormatUint(rows[len(rows)-1].Seq, 10)
	} else if resume != 0 {
		next = strconv.FormatUint(resume, 10)
	}
	b := append(make([]byte, 0, 256+len(rows)*128), `{"board":`...)
	b = appendString(b, bi.ID)
	b = append(b, `,"player":`...)
	b = appendString(b, player)
	b = append(b, `,"items":`...)
	b = appendHistory(b, rows, admin)
	b = append(b, `,"next_cursor":`...)
	if next != "" {
		b = appendString(b, next)
	} else {
		b = append(b, "null"...)
	}
	writeJSON(w, http.StatusOK, append(b, '}'))
	return nil
}
