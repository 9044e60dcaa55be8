package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Loading boards from the store: at start, after a reload, and a period on
// first read. Each board's current and previous periods are read, then its
// log after the watermark is replayed on top (engine.go).

// loader reads boards and their periods from the store into memory, and
// replays the log on top. It touches no published state: what it builds is
// published by its caller (Start, a reload, a read of an old period).
type loader struct {
	store   podium.Store
	now     podium.Clock
	players *players
	// cp hears which entries a replay rebuilt, for the next checkpoint:
	// the pipeline's (pipeline.go), so loading that touches it runs where
	// the checkpointer may be used (Start before the writer, or the writer
	// behind a barrier).
	cp *checkpointer
}

// loadBoard builds the in-memory state of one board: its seq, the entries
// of its current and previous periods, and the log after the board's
// watermark replayed on top (loading every period that log touches). Older
// periods are loaded on first read.
func (l *loader) loadBoard(ctx context.Context, b *podium.Board, watermark uint64) (*BoardState, error) {
	seq, err := l.store.LastSeq(ctx, b.ID)
	if err != nil {
		return nil, fmt.Errorf("board %s: last seq: %w", b.ID, err)
	}
	pcs, err := l.store.Periods(ctx, b.ID)
	if err != nil {
		return nil, fmt.Errorf("board %s: periods: %w", b.ID, err)
	}
	tail, err := l.readTail(ctx, b.ID, watermark)
	if err != nil {
		return nil, err
	}
	bs, want := l.boardHead(b, seq, pcs, tail)
	for _, id := range want {
		ps, err := l.readPeriod(ctx, bs, id, bs.known[id])
		if err != nil {
			return nil, err
		}
		bs.setPeriod(id, ps)
		delete(bs.known, id)
	}
	if err := l.replayTail(bs, tail); err != nil {
		return nil, err
	}
	return bs, nil
}

// boardHead starts the in-memory state of a board from its last seq, its
// stored periods and the log after its watermark, and lists the stored
// periods to load now: the current and previous ones, and those the tail
// touches.
func (l *loader) boardHead(b *podium.Board, seq uint64, pcs []podium.PeriodCount, tail []podium.Submission) (*BoardState, []string) {
	bs := newBoardState(b)
	bs.seq = seq
	now := l.now()
	for _, pc := range pcs {
		if !b.PeriodExpired(now, pc.ID) { // retention.go: going, never loaded
			bs.setKnown(pc.ID, pc.Entries)
		}
	}
	cur := podium.PeriodAt(b.Reset, now)
	want := []string{cur.ID}
	if prev, ok := podium.PreviousPeriod(b.Reset, cur); ok {
		want = append(want, prev.ID)
	}
	for i := range tail {
		want = append(want, tail[i].Period)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	return bs, slices.DeleteFunc(want, func(id string) bool {
		_, ok := bs.known[id]
		return !ok
	})
}

// replayTail replays the log after a board's watermark (in seq order) on
// top of its loaded periods.
func (l *loader) replayTail(bs *BoardState, tail []podium.Submission) error {
	b := bs.def.Load()
	now := l.now()
	for i := range tail {
		sub := &tail[i]
		if b.PeriodExpired(now, sub.Period) {
			continue // retention.go: a period going, never loaded
		}
		ps := bs.periods[sub.Period]
		if ps == nil {
			ps = newPeriodState(bs.desc)
			bs.setPeriod(sub.Period, ps)
		}
		pid := l.players.intern(sub.Player)
		changed, err := l.replayInto(b, ps, pid, sub)
		if err != nil {
			return fmt.Errorf("board %s: replay seq %d: %w", b.ID, sub.Seq, err)
		}
		if changed {
			l.cp.mark(ovKey{bs, sub.Period, pid}, sub.Seq)
		}
	}
	if len(tail) > 0 && !l.cp.off {
		l.cp.seqMoved[bs] = true // the next checkpoint writes what the replay rebuilt
	}
	return nil
}

// loadBoards builds the in-memory state of every board with a store that
// reads what a start needs of them all in a few statements (StartLoader):
// the same state loadBoard builds, board by board.
func (l *loader) loadBoards(ctx context.Context, sl podium.StartLoader, boards []podium.Board) ([]*BoardState, error) {
	seqs, err := sl.LastSeqs(ctx)
	if err != nil {
		return nil, fmt.Errorf("load boards: last seqs: %w", err)
	}
	pcs, err := sl.AllPeriods(ctx)
	if err != nil {
		return nil, fmt.Errorf("load boards: periods: %w", err)
	}
	tails := map[string][]podium.Submission{}
	err = sl.Tails(ctx, func(s *podium.Submission) error {
		tails[s.Board] = append(tails[s.Board], copySubmission(s))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load boards: read the logs after the watermarks: %w", err)
	}
	out := make([]*BoardState, len(boards))
	byID := make(map[string]*BoardState, len(boards))
	var refs []podium.EntryRef
	readers := map[podium.EntryRef]*periodReader{}
	for i := range boards {
		b := &boards[i]
		tail := tails[b.ID]
		slices.SortStableFunc(tail, func(x, y podium.Submission) int { return cmp.Compare(x.Seq, y.Seq) })
		bs, want := l.boardHead(b, seqs[b.ID], pcs[b.ID], tail)
		out[i], byID[b.ID] = bs, bs
		for _, id := range want {
			r := podium.EntryRef{Board: b.ID, Period: id}
			refs = append(refs, r)
			readers[r] = l.newPeriodReader(bs, bs.known[id])
		}
	}
	var (
		last podium.EntryRef
		cur  *periodReader
	)
	err = sl.LoadPeriods(ctx, refs, func(en *podium.Entry) error {
		if cur == nil || en.Board != last.Board || en.Period != last.Period {
			last = podium.EntryRef{Board: en.Board, Period: en.Period}
			if cur = readers[last]; cur == nil {
				return fmt.Errorf("board %s period %s: an entry of a period not asked for", en.Board, en.Period)
			}
		}
		cur.add(en)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load boards: load entries: %w", err)
	}
	for _, r := range refs {
		bs := byID[r.Board]
		bs.setPeriod(r.Period, readers[r].finish())
		delete(bs.known, r.Period)
	}
	for i, bs := range out {
		if err := l.replayTail(bs, tails[boards[i].ID]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readTail reads the log of a board after a seq.
func (l *loader) readTail(ctx context.Context, board string, after uint64) ([]podium.Submission, error) {
	var tail []podium.Submission
	err := l.store.Log(ctx, board, after, func(s *podium.Submission) error {
		tail = append(tail, copySubmission(s))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("board %s: read the log after seq %d: %w", board, after, err)
	}
	return tail, nil
}

// copySubmission copies a submission a store reuses (meta kept only when
// there is one worth keeping).
func copySubmission(s *podium.Submission) podium.Submission {
	c := *s
	c.Keys = append([]int64(nil), s.Keys...)
	if hasMeta(s.Meta) {
		c.Meta = append(json.RawMessage(nil), s.Meta...)
	} else {
		c.Meta = nil
	}
	return c
}

// replayInto applies one logged submission to a period's index, unless the
// entry already reflects it (its seq is not below the entry's).
func (l *loader) replayInto(b *podium.Board, ps *periodState, pid uint32, s *podium.Submission) (bool, error) {
	cur, ok := ps.idx.Get(pid)
	if ok && s.Seq <= cur.Seq {
		return false, nil
	}
	if s.Kind == podium.KindDelete {
		if ok {
			ps.idx.Delete(pid)
			delete(ps.meta, pid)
			delete(ps.results, pid)
		}
		return ok, nil
	}
	var curEntry *podium.Entry
	if ok {
		curEntry = &podium.Entry{Keys: cur.Keys[:len(b.Keys)], At: podium.FromMillis(cur.At), Seq: cur.Seq, Meta: ps.meta[pid], Results: ps.results[pid]}
	}
	next, changed, err := podium.Apply(b, curEntry, s)
	if err != nil || !changed {
		return false, err
	}
	re := rank.Entry{Player: pid, At: next.At.UnixMilli(), Seq: next.Seq, Hidden: l.players.hidden(pid)}
	copy(re.Keys[:], next.Keys)
	ps.idx.Put(re)
	if hasMeta(next.Meta) {
		ps.meta[pid] = next.Meta
	} else {
		delete(ps.meta, pid)
	}
	if next.Results != nil {
		ps.results[pid] = next.Results
	}
	return true, nil
}

// readPeriod reads one period of a board from the store into a new index;
// sizeHint is the number of entries expected (0 if unknown). It touches no
// state of bs but its definition, so it needs no lock.
func (l *loader) readPeriod(ctx context.Context, bs *BoardState, period string, sizeHint int) (*periodState, error) {
	r := l.newPeriodReader(bs, sizeHint)
	err := l.store.LoadEntries(ctx, bs.def.Load().ID, period, func(en *podium.Entry) error {
		r.add(en)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("board %s period %s: load entries: %w", bs.def.Load().ID, period, err)
	}
	return r.finish(), nil
}

// periodReader builds one period's index from the stored entries a store
// hands it one at a time (reused: it copies what it keeps). Rows are
// interned in batches: one lock per batch, not per row.
type periodReader struct {
	players *players
	bs      *BoardState
	buf     []rank.Entry
	meta    map[uint32]json.RawMessage
	results map[uint32][]podium.Result // best_k
	names   []string
	metas   []json.RawMessage
	kept    [][]podium.Result
	ids     []uint32
	hidden  []bool
}

const periodReadBatch = 1024

// newPeriodReader starts reading a period of bs; sizeHint is the number
// of entries expected (0 if unknown).
func (l *loader) newPeriodReader(bs *BoardState, sizeHint int) *periodReader {
	r := &periodReader{players: l.players, bs: bs, meta: map[uint32]json.RawMessage{}, results: map[uint32][]podium.Result{}}
	if sizeHint > 0 {
		r.buf = make([]rank.Entry, 0, sizeHint)
		l.players.reserve(sizeHint)
	}
	return r
}

func (r *periodReader) add(en *podium.Entry) {
	if r.names == nil {
		n := periodReadBatch // a small period needs no batch of the full size
		if c := cap(r.buf); c > 0 {
			n = min(n, c)
		}
		r.names, r.metas, r.kept = make([]string, 0, n), make([]json.RawMessage, 0, n), make([][]podium.Result, 0, n)
		r.ids, r.hidden = make([]uint32, n), make([]bool, n)
	}
	re := rank.Entry{At: en.At.UnixMilli(), Seq: en.Seq}
	copy(re.Keys[:], en.Keys)
	r.buf = append(r.buf, re)
	r.names = append(r.names, en.Player)
	var m json.RawMessage
	if hasMeta(en.Meta) {
		m = append(json.RawMessage(nil), en.Meta...)
	}
	r.metas = append(r.metas, m)
	r.kept = append(r.kept, podium.CopyResults(en.Results))
	if len(r.names) == cap(r.names) {
		r.flush()
	}
}

func (r *periodReader) flush() {
	if len(r.names) == 0 {
		return
	}
	if len(r.ids) < len(r.names) {
		r.ids, r.hidden = make([]uint32, len(r.names)), make([]bool, len(r.names))
	}
	ids, hidden := r.ids[:len(r.names)], r.hidden[:len(r.names)]
	r.players.internAll(r.names, ids, hidden)
	start := len(r.buf) - len(r.names)
	for i := range r.names {
		r.buf[start+i].Player, r.buf[start+i].Hidden = ids[i], hidden[i]
		if r.metas[i] != nil {
			r.meta[ids[i]] = r.metas[i]
		}
		if r.kept[i] != nil {
			r.results[ids[i]] = r.kept[i]
		}
	}
	r.names, r.metas, r.kept = r.names[:0], r.metas[:0], r.kept[:0]
}

// finish returns the period's state.
func (r *periodReader) finish() *periodState {
	r.flush()
	ps := newPeriodState(r.bs.desc)
	ps.idx.Load(r.buf)
	ps.meta = r.meta
	ps.results = r.results
	return ps
}
