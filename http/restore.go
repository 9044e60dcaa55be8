package http

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// restoreBody is the body of POST /v1/boards/{board}/restore (podium
// import): entries to set exactly, with their original times and periods.
type restoreBody struct {
	Entries []restoreItemBody `json:"entries"`
}

type restoreItemBody struct {
	Period string          `json:"period"`
	Player string          `json:"player"`
	Keys   []int64         `json:"keys"`
	At     string          `json:"at"`
	Meta   json.RawMessage `json:"meta"`
}

// toItem validates an item's shape; the engine checks it against the
// board (key count, period id, at within the period and not ahead).
func (ib *restoreItemBody) toItem() (engine.RestoreItem, error) {
	if err := podium.ValidPlayerRef(ib.Player); err != nil {
		return engine.RestoreItem{}, err
	}
	if ib.Period == "" || len(ib.Period) > 64 {
		return engine.RestoreItem{}, podium.Errorf(podium.ECodeInvalid, "period (a period id of the board, 1 to 64 bytes) is required")
	}
	if len(ib.Keys) == 0 || len(ib.Keys) > podium.MaxKeys {
		return engine.RestoreItem{}, podium.Errorf(podium.ECodeInvalid, "keys (1 to %d integers) is required", podium.MaxKeys)
	}
	if len(ib.At) > 64 {
		return engine.RestoreItem{}, podium.Errorf(podium.ECodeInvalid, "at is longer than 64 bytes")
	}
	at, err := time.Parse(time.RFC3339Nano, ib.At)
	if err != nil {
		return engine.RestoreItem{}, podium.Errorf(podium.ECodeInvalid, "at (an RFC 3339 time, when the entry reached its keys) is required: %q", ib.At)
	}
	var meta json.RawMessage
	if len(ib.Meta) > 0 && string(ib.Meta) != "null" {
		m, err := podium.NormalizeMeta(ib.Meta)
		if err != nil {
			return engine.RestoreItem{}, err
		}
		if string(m) != "{}" {
			meta = m
		}
	}
	return engine.RestoreItem{Period: ib.Period, Player: ib.Player, Keys: ib.Keys, At: at, Meta: meta}, nil
}

// restore sets entries of one board exactly (admin): see engine.Restore.
// The answer has one result per item, in order: restored (with the seq of
// the restore row), unchanged (the entry already was exactly the item), or
// an error of that item alone.
func (s *boardHandlers) restore(w http.ResponseWriter, r *http.Request) error {
	board := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, board); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body restoreBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if body.Entries == nil {
		return podium.Errorf(podium.ECodeInvalid, "entries (an array of entries to restore) is required")
	}
	if len(body.Entries) > engine.MaxRestore {
		return podium.Errorf(podium.ECodeTooLarge, "a restore holds at most %d entries; got %d", engine.MaxRestore, len(body.Entries))
	}
	if _, err := s.eng.Board(board); err != nil {
		return err
	}
	errs := make([]error, len(body.Entries))
	items := make([]engine.RestoreItem, 0, len(body.Entries))
	for i := range body.Entries {
		it, err := body.Entries[i].toItem()
		if err != nil {
			errs[i] = err
			continue
		}
		items = append(items, it)
	}
	var res []engine.RestoreResult
	if len(items) > 0 {
		if res, err = s.eng.Restore(r.Context(), board, items); err != nil {
			return err
		}
	}
	var restored, unchanged, refused int
	out := make([]byte, 0, 64+len(body.Entries)*96)
	out = append(out, `{"results":[`...)
	j := 0
	for i := range body.Entries {
		if i > 0 {
			out = append(out, ',')
		}
		if errs[i] != nil {
			refused++
			out = appendItemError(out, errs[i])
			continue
		}
		rr := &res[j]
		j++
		switch {
		case rr.Err != nil:
			refused++
			out = appendItemError(out, rr.Err)
			continue
		case rr.Unchanged:
			unchanged++
		default:
			restored++
		}
		out = append(out, `{"period":`...)
		out = appendString(out, rr.Period)
		out = append(out, `,"player":`...)
		out = appendString(out, rr.Player)
		if rr.Unchanged {
			out = append(out, `,"status":"unchanged"}`...)
			continue
		}
		out = append(out, `,"status":"restored","seq":`...)
		out = strconv.AppendUint(out, rr.Seq, 10)
		out = append(out, '}')
	}
	out = append(out, `],"restored":`...)
	out = strconv.AppendInt(out, int64(restored), 10)
	out = append(out, `,"unchanged":`...)
	out = strconv.AppendInt(out, int64(unchanged), 10)
	out = append(out, `,"refused":`...)
	out = strconv.AppendInt(out, int64(refused), 10)
	writeJSON(w, http.StatusOK, append(out, '}'))
	return nil
}
