package http

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/csvcell"
)

// exportChunk is how many entries an export reads under one hold of the
// board's read lock: the chunk is encoded into a buffer (about 150 bytes
// an entry) and written after the lock is let go, so that a slow reader
// never holds up the board's writer, and memory stays constant whatever
// the board's size.
const exportChunk = 2000

// exportWriteTimeout bounds the write of one chunk: a client that stops
// reading is cut instead of holding a goroutine and a buffer forever.
const exportWriteTimeout = 30 * time.Second

// exportBoard streams a board's period in rank order as CSV or JSON Lines:
//
//	GET /v1/boards/{board}/export?format=csv|jsonl&period=&include_hidden=
//
// The period is read a chunk at a time, each chunk consistent in itself.
// When the board took writes during the export, entries may have moved
// between chunks (a player may show twice, or not at all): the JSON Lines
// end line and the Podium-Export-Consistent trailer say whether the seq
// moved, so a caller that needs a snapshot can retry (or export a period
// that has ended, which no longer changes).
func (s *entryHandlers) exportBoard(w http.ResponseWriter, r *http.Request) error {
	q, bi, err := s.readBoardQuery(r)
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
	// The first chunk resolves the period and fails before anything is
	// written when it does not exist; nothing is written from under the
	// board's lock (the callbacks fill buf).
	var (
		head  engine.Page
		buf   bytes.Buffer
		cw    = csv.NewWriter(&buf)
		row   []string
		n     int
		seq0  uint64
		moved bool
	)
	rc := http.NewResponseController(w)
	for offset := 0; ; offset += exportChunk {
		got := 0
		err := s.eng.TopEach(r.Context(), q, offset, exportChunk, func(p *engine.Page) {
			head = *p
			if offset > 0 {
				return
			}
			// The first chunk starts with the head line or row.
			if format == "jsonl" {
				buf.Write(exportHeadLine(&bi, p))
				return
			}
			cols := []string{"rank", "player", "name"}
			for _, k := range bi.Keys {
				cols = append(cols, k.Name)
			}
			cols = append(cols, "at")
			if q.IncludeHidden {
				cols = append(cols, "hidden")
			}
			cw.Write(append(cols, "meta"))
		}, func(e *engine.EntryView) {
			got++
			if format == "jsonl" {
				b := buf.AvailableBuffer()
				b = appendEntry(b, e)
				b = append(b, '\n')
				buf.Write(b)
				return
			}
			// Text cells are neutralised against spreadsheet formulas
			// (internal/csvcell); numbers are written as they are.
			row = append(row[:0], strconv.Itoa(e.Rank), csvcell.Escape(e.Player), csvcell.Escape(e.Name))
			for _, k := range e.Keys {
				row = append(row, strconv.FormatInt(k, 10))
			}
			row = append(row, e.At.UTC().Format("2006-01-02T15:04:05.000Z07:00")) // as in JSON answers
			if q.IncludeHidden {
				row = append(row, strconv.FormatBool(e.Hidden))
			}
			meta := string(e.Meta)
			if meta == "" {
				meta = "{}"
			}
			cw.Write(append(row, csvcell.Escape(meta)))
		})
		if err != nil {
			if offset == 0 {
				return err
			}
			return nil // the answer has started: the client sees it cut short
		}
		cw.Flush()
		if offset == 0 {
			seq0 = head.Seq
			q.Period = head.Period // the later chunks read the same period, even across a reset
			h := w.Header()
			name := exportName(head.Board, head.Period, format)
			h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
			h.Set("Podium-Seq", strconv.FormatUint(head.Seq, 10))
			h.Set("Trailer", "Podium-Export-Consistent")
			h.Set("Cache-Control", "no-store")
			if format == "jsonl" {
				h.Set("Content-Type", "application/jsonl; charset=utf-8")
			} else {
				h.Set("Content-Type", "text/csv; charset=utf-8")
			}
			w.WriteHeader(http.StatusOK)
		}
		if head.Seq != seq0 {
			moved = true
		}
		n += got
		last := got < exportChunk
		if last && format == "jsonl" {
			b := buf.AvailableBuffer()
			b = append(b, `{"end":true,"entries":`...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, `,"seq":`...)
			b = strconv.AppendUint(b, head.Seq, 10)
			b = append(b, `,"consistent":`...)
			b = strconv.AppendBool(b, !moved)
			b = append(b, "}\n"...)
			buf.Write(b)
		}
		rc.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
		if _, err := w.Write(buf.Bytes()); err != nil {
			return nil
		}
		buf.Reset()
		if last {
			w.Header().Set("Podium-Export-Consistent", strconv.FormatBool(!moved))
			return nil
		}
		rc.Flush()
		if s.exportPause != nil {
			s.exportPause(offset / exportChunk)
		}
	}
}

// exportHeadLine is the first line of a JSON Lines export: the board's
// definition and the period read.
func exportHeadLine(bi *engine.BoardInfo, p *engine.Page) []byte {
	b := append([]byte(nil), `{"export":"podium.entries","board":`...)
	b = appendBoard(b, bi)
	b = append(b, `,"period":`...)
	b = appendString(b, p.Period)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, p.Seq, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(p.Total), 10)
	return append(b, "}\n"...)
}

// exportName is the file name an export suggests: the board and period
// with characters a file system may dislike replaced.
func exportName(board, period, ext string) string {
	b := []byte(board + "-" + period)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b) + "." + ext
}
