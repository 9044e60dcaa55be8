package postgres

import (
	"cmp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
)

// The writer of a commit: the column arrays each part of a batch is
// encoded into, in PostgreSQL's binary format, and queued as one statement
// of the pipeline that Commit sends (commit.go).

// writer holds the buffers of one commit; Store.scratch recycles them.
type writer struct {
	p    params
	head []podium.Watermark // one per board
	pick []int              // the indexes of the upserts to store
	idem []podium.IdempotencyRecord

	// Positions in head, pick or idem.
	boards  map[string]int
	entries map[podium.EntryRef]int
	records map[[2]string]int

	queued int // statements queued since batch began
}

func (s *Store) writer() *writer {
	if w, ok := s.scratch.Get().(*writer); ok {
		return w
	}
	return &writer{boards: map[string]int{}, entries: map[podium.EntryRef]int{}, records: map[[2]string]int{}}
}

// chunks calls queue for each run of at most maxRows of n rows.
func chunks(n int, queue func(lo, hi int)) {
	for lo := 0; lo < n; lo += maxRows {
		queue(lo, min(lo+maxRows, n))
	}
}

func (w *writer) queue(pb *pgconn.Batch, sd *pgconn.StatementDescription) {
	pb.ExecStatement(sd, w.p.values(), binaryFormat, nil)
	w.queued++
}

// heads queues the move of each board's head to the highest seq of subs,
// in board order.
func (w *writer) heads(pb *pgconn.Batch, st *statements, subs []podium.Submission) {
	if len(subs) == 0 {
		return
	}
	w.head = w.head[:0]
	clear(w.boards)
	for i := range subs {
		sub := &subs[i]
		if j, ok := w.boards[sub.Board]; ok {
			w.head[j].Seq = max(w.head[j].Seq, sub.Seq)
			continue
		}
		w.boards[sub.Board] = len(w.head)
		w.head = append(w.head, podium.Watermark{Board: sub.Board, Seq: sub.Seq})
	}
	slices.SortFunc(w.head, func(a, b podium.Watermark) int { return strings.Compare(a.Board, b.Board) })
	w.boardSeqs(pb, st.heads, w.head)
}

// boardSeqs queues sd over (board, seq) rows.
func (w *writer) boardSeqs(pb *pgconn.Batch, sd *pgconn.StatementDescription, rows []podium.Watermark) {
	chunks(len(rows), func(lo, hi int) {
		rows := rows[lo:hi]
		w.p.reset()
		w.p.beginArray(oidText, len(rows))
		for i := range rows {
			elemText(&w.p, rows[i].Board)
		}
		w.p.endArray()
		w.p.beginArray(oidInt8, len(rows))
		for i := range rows {
			w.p.elemInt8(int64(rows[i].Seq))
		}
		w.p.endArray()
		w.queue(pb, sd)
	})
}

func (w *writer) log(pb *pgconn.Batch, st *statements, subs []podium.Submission) {
	chunks(len(subs), func(lo, hi int) {
		subs := subs[lo:hi]
		n := len(subs)
		p := &w.p
		p.reset()
		p.beginArray(oidText, n)
		for i := range subs {
			elemText(p, subs[i].Board)
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range subs {
			p.elemInt8(int64(subs[i].Seq))
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range subs {
			p.elemInt8(podium.Millis(subs[i].At))
		}
		p.endArray()
		for k := range podium.MaxKeys {
			p.beginArray(oidInt8, n)
			for i := range subs {
				p.elemKey(subs[i].Keys, k)
			}
			p.endArray()
		}
		p.beginArray(oidInt2, n)
		for i := range subs {
			p.elemInt2(int16(subs[i].Kind))
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range subs {
			elemText(p, subs[i].Period)
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range subs {
			elemText(p, subs[i].Player)
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range subs {
			p.elemMeta(subs[i].Meta)
		}
		p.endArray()
		w.queue(pb, st.log)
	})
}

func (w *writer) deletes(pb *pgconn.Batch, st *statements, dels []podium.EntryRef) {
	chunks(len(dels), func(lo, hi int) {
		dels := dels[lo:hi]
		p := &w.p
		p.reset()
		for _, field := range []func(*podium.EntryRef) string{
			func(d *podium.EntryRef) string { return d.Board },
			func(d *podium.EntryRef) string { return d.Period },
			func(d *podium.EntryRef) string { return d.Player },
		} {
			p.beginArray(oidText, len(dels))
			for i := range dels {
				elemText(p, field(&dels[i]))
			}
			p.endArray()
		}
		w.queue(pb, st.del)
	})
}

// pickUpserts sets w.pick to the indexes of the upserts of es to store:
// the last of each entry (one INSERT ... ON CONFLICT statement may not
// update a row twice), in key order. Key order makes the inserts into the
// primary key's B-tree local (about twice as fast as random order for a
// large rebuild) and locks rows in one order, so two commits writing the
// same entries cannot deadlock.
func (w *writer) pickUpserts(es []podium.Entry) {
	w.pick = w.pick[:0]
	if len(es) == 1 {
		w.pick = append(w.pick, 0)
		return
	}
	clear(w.entries)
	for i := range es {
		w.entries[entryRef(&es[i])] = i
	}
	for i := range es {
		if w.entries[entryRef(&es[i])] == i {
			w.pick = append(w.pick, i)
		}
	}
	slices.SortFunc(w.pick, func(i, j int) int {
		a, b := &es[i], &es[j]
		return cmp.Or(strings.Compare(a.Board, b.Board), strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
}

// upserts queues the upserts of es that pick names, maxRows a statement.
func (w *writer) upserts(pb *pgconn.Batch, st *statements, es []podium.Entry, pick []int) {
	chunks(len(pick), func(lo, hi int) {
		pick := pick[lo:hi]
		n := len(pick)
		p := &w.p
		p.reset()
		for _, field := range []func(*podium.Entry) string{
			func(e *podium.Entry) string { return e.Board },
			func(e *podium.Entry) string { return e.Period },
			func(e *podium.Entry) string { return e.Player },
		} {
			p.beginArray(oidText, n)
			for _, i := range pick {
				elemText(p, field(&es[i]))
			}
			p.endArray()
		}
		p.beginArray(oidInt8, n)
		for _, i := range pick {
			p.elemInt8(int64(es[i].Seq))
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for _, i := range pick {
			p.elemInt8(podium.Millis(es[i].At))
		}
		p.endArray()
		for k := range podium.MaxKeys {
			p.beginArray(oidInt8, n)
			for _, i := range pick {
				p.elemKey(es[i].Keys, k)
			}
			p.endArray()
		}
		p.beginArray(oidText, n)
		for _, i := range pick {
			p.elemMeta(es[i].Meta)
		}
		p.endArray()
		p.beginArray(oidText, n) // the kept results of a best_k board
		for _, i := range pick {
			if rs := es[i].Results; len(rs) > 0 {
				elemText(p, podium.EncodeResults(rs))
			} else {
				p.elemNull()
			}
		}
		p.endArray()
		w.queue(pb, st.upsert)
	})
}

func entryRef(e *podium.Entry) podium.EntryRef {
	return podium.EntryRef{Board: e.Board, Period: e.Period, Player: e.Player}
}

// watermarks queues the last watermark of each board of wms.
func (w *writer) watermarks(pb *pgconn.Batch, st *statements, wms []podium.Watermark) {
	if len(wms) == 0 {
		return
	}
	w.head = w.head[:0]
	clear(w.boards)
	for _, wm := range wms {
		if j, ok := w.boards[wm.Board]; ok {
			w.head[j].Seq = wm.Seq
			continue
		}
		w.boards[wm.Board] = len(w.head)
		w.head = append(w.head, wm)
	}
	w.boardSeqs(pb, st.watermarks, w.head)
}

// idempotency queues recs, merged per (scope, key) as storing them one by
// one would leave them: the first record, with the first answer that came
// if it had none.
func (w *writer) idempotency(pb *pgconn.Batch, st *statements, recs []podium.IdempotencyRecord) {
	if len(recs) == 0 {
		return
	}
	w.idem = w.idem[:0]
	clear(w.records)
	for _, r := range recs {
		k := [2]string{r.Scope, r.Key}
		if j, ok := w.records[k]; ok {
			if m := &w.idem[j]; m.Status == 0 && r.Status != 0 {
				m.Status, m.Body = r.Status, r.Body
			}
			continue
		}
		w.records[k] = len(w.idem)
		w.idem = append(w.idem, r)
	}
	recs = w.idem
	chunks(len(recs), func(lo, hi int) {
		recs := recs[lo:hi]
		n := len(recs)
		p := &w.p
		p.reset()
		p.beginArray(oidText, n)
		for i := range recs {
			elemText(p, recs[i].Scope)
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range recs {
			elemText(p, recs[i].Key)
		}
		p.endArray()
		p.beginArray(oidBytea, n)
		for i := range recs {
			elemText(p, recs[i].RequestHash)
		}
		p.endArray()
		p.beginArray(oidInt4, n)
		for i := range recs {
			p.elemInt4(int32(recs[i].Status))
		}
		p.endArray()
		p.beginArray(oidBytea, n)
		for i := range recs {
			elemText(p, recs[i].Body)
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range recs {
			p.elemInt8(podium.Millis(recs[i].CreatedAt))
		}
		p.endArray()
		w.queue(pb, st.idem)
	})
	clear(w.idem) // let the bodies be collected
}
