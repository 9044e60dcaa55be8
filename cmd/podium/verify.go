package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// The verification of podium migrate: the target must hold exactly what
// the source holds, compared field by field, and pass the store check.

// verifyResult is what the target holds and how many differences were
// found.
type verifyResult struct {
	boards, players, keys, idempotency int
	submissions, entries               int
	problems                           int
}

// problemList collects the differences of one part of the verification,
// listing the first few.
type problemList struct {
	lines []string
	n     int
}

const problemsShown = 20

func (p *problemList) add(format string, args ...any) {
	p.n++
	if len(p.lines) < problemsShown {
		p.lines = append(p.lines, fmt.Sprintf(format, args...))
	}
}

func (p *problemList) list() []string {
	if p.n > len(p.lines) {
		return append(slices.Clone(p.lines), fmt.Sprintf("and %d more", p.n-len(p.lines)))
	}
	return p.lines
}

// compareSets compares two sets of described objects by id.
func compareSets(what string, want, got map[string]string) *problemList {
	var p problemList
	ids := make([]string, 0, len(want)+len(got))
	for id := range want {
		ids = append(ids, id)
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		w, inSrc := want[id]
		g, inDst := got[id]
		switch {
		case !inDst:
			p.add("%s %q: missing from the target", what, id)
		case !inSrc:
			p.add("%s %q: in the target only", what, id)
		case w != g:
			p.add("%s %q: want %s, got %s", what, id, w, g)
		}
	}
	return &p
}

func metaString(m []byte) string {
	if emptyMeta(m) {
		return "{}"
	}
	return string(m)
}

func describeBoard(b *podium.Board) string {
	return fmt.Sprintf("title %q keys %v mode %s reset %s/%s public %v meta %s created %d updated %d",
		b.Title, b.Keys, b.Mode, b.Reset.Every, b.Reset.TZ, b.Public, metaString(b.Meta), podium.Millis(b.CreatedAt), podium.Millis(b.UpdatedAt)) +
		describeTourney(b) // tourney.go
}

func describePlayer(p *podium.Player) string {
	return fmt.Sprintf("name %q hidden %v meta %s updated %d", p.Name, p.Hidden, metaString(p.Meta), podium.Millis(p.UpdatedAt))
}

func describeKey(k *podium.APIKey) string {
	return fmt.Sprintf("name %q scopes %q boards %q hash %s created %d", k.Name, k.Scopes, k.Boards, k.Hash, podium.Millis(k.CreatedAt))
}

func describeIdempotency(r *podium.IdempotencyRecord) string {
	return fmt.Sprintf("request %x status %d body %q created %d", r.RequestHash, r.Status, r.Body, podium.Millis(r.CreatedAt))
}

func describeSubmission(s *podium.Submission) string {
	return fmt.Sprintf("kind %d period %s player %q keys %v at %d meta %s", s.Kind, s.Period, s.Player, s.Keys, podium.Millis(s.At), metaString(s.Meta))
}

func describeEntry(e *podium.Entry) string {
	return fmt.Sprintf("keys %v at %d seq %d meta %s", e.Keys, podium.Millis(e.At), e.Seq, metaString(e.Meta))
}

// verifyMigration compares dst with src and prints each part's outcome.
// Idempotency records are compared from since on.
func verifyMigration(ctx context.Context, src, dst podium.Store, since time.Time, w io.Writer) (*verifyResult, error) {
	s, err := readInventory(ctx, src, since)
	if err != nil {
		return nil, err
	}
	t, err := readInventory(ctx, dst, since)
	if err != nil {
		return nil, err
	}
	r := &verifyResult{boards: len(t.boards), players: len(t.players), keys: len(t.keys), idempotency: len(t.idem)}
	part := func(what string, p *problemList) {
		report(w, what, p.list())
		r.problems += p.n
	}
	byID := func(n int, id func(int) string, desc func(int) string) map[string]string {
		m := make(map[string]string, n)
		for i := range n {
			m[id(i)] = desc(i)
		}
		return m
	}
	part(fmt.Sprintf("boards (%d)", len(s.boards)), compareSets("board",
		byID(len(s.boards), func(i int) string { return s.boards[i].ID }, func(i int) string { return describeBoard(&s.boards[i]) }),
		byID(len(t.boards), func(i int) string { return t.boards[i].ID }, func(i int) string { return describeBoard(&t.boards[i]) })))
	part(fmt.Sprintf("players (%d)", len(s.players)), compareSets("player",
		byID(len(s.players), func(i int) string { return s.players[i].ID }, func(i int) string { return describePlayer(&s.players[i]) }),
		byID(len(t.players), func(i int) string { return t.players[i].ID }, func(i int) string { return describePlayer(&t.players[i]) })))
	part(fmt.Sprintf("API keys (%d)", len(s.keys)), compareSets("API key",
		byID(len(s.keys), func(i int) string { return s.keys[i].ID }, func(i int) string { return describeKey(&s.keys[i]) }),
		byID(len(t.keys), func(i int) string { return t.keys[i].ID }, func(i int) string { return describeKey(&t.keys[i]) })))
	idemID := func(rec *podium.IdempotencyRecord) string { return rec.Scope + " " + rec.Key }
	part(fmt.Sprintf("idempotency records since %s (%d)", since.UTC().Format(time.RFC3339), len(s.idem)), compareSets("idempotency record",
		byID(len(s.idem), func(i int) string { return idemID(&s.idem[i]) }, func(i int) string { return describeIdempotency(&s.idem[i]) }),
		byID(len(t.idem), func(i int) string { return idemID(&t.idem[i]) }, func(i int) string { return describeIdempotency(&t.idem[i]) })))

	srcT, err := tourneyRows(ctx, src) // tourney.go
	if err != nil {
		return nil, err
	}
	dstT, err := tourneyRows(ctx, dst)
	if err != nil {
		return nil, err
	}
	part(fmt.Sprintf("tournament joins, payouts and settlements (%d)", len(srcT)), compareSets("tournament row", srcT, dstT))

	srcWMs, err := src.Watermarks(ctx)
	if err != nil {
		return nil, err
	}
	dstWMs, err := dst.Watermarks(ctx)
	if err != nil {
		return nil, err
	}
	// A shared store also keeps a head per board, which the nodes lock and
	// follow: every board needs one, at its last seq.
	var heads map[string]uint64
	if sh, ok := dst.(podium.SharedStore); ok {
		if heads, err = sh.Heads(ctx); err != nil {
			return nil, err
		}
	}
	for i := range s.boards {
		b := &s.boards[i]
		var p problemList
		last, err := src.LastSeq(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		dstLast, err := dst.LastSeq(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		if dstLast != last {
			p.add("last seq: want %d, got %d", last, dstLast)
		}
		if h, ok := heads[b.ID]; heads != nil && (!ok || h != last) {
			got := "none"
			if ok {
				got = fmt.Sprint(h)
			}
			p.add("head: want seq %d, got %s (the nodes lock and follow a board by its head)", last, got)
		}
		if dstWMs[b.ID] != last {
			p.add("watermark: want %d (the end of the log), got %d", last, dstWMs[b.ID])
		}
		subs, err := compareLogs(ctx, src, dst, b.ID, &p)
		if err != nil {
			return nil, fmt.Errorf("board %s: %w", b.ID, err)
		}
		entries, periods, err := compareEntries(ctx, src, dst, b, srcWMs[b.ID], &p)
		if err != nil {
			return nil, fmt.Errorf("board %s: %w", b.ID, err)
		}
		r.submissions += subs
		r.entries += entries
		part(fmt.Sprintf("board %s: %d submissions, %d entries in %d periods", b.ID, subs, entries, periods), &p)
	}
	t0 := time.Now()
	chk, err := engine.CheckStoreDetail(ctx, dst)
	if err != nil {
		return nil, err
	}
	var p problemList
	for _, d := range chk.Diffs {
		p.add("%s", d)
	}
	part(fmt.Sprintf("target: entries vs a replay of its log (%d entries, %s)", chk.Entries, time.Since(t0).Round(time.Millisecond)), &p)
	return r, nil
}

// compareLogs compares a board's log in both stores, row by row in seq
// order, and returns the number of rows in the target. The source is read
// in a goroutine, so that neither log is held in memory whole.
func compareLogs(ctx context.Context, src, dst podium.Store, board string, p *problemList) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan []podium.Submission, 4)
	errc := make(chan error, 1)
	go func() {
		defer close(ch)
		var buf []podium.Submission
		send := func() error {
			select {
			case ch <- buf:
				buf = nil
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := src.Log(ctx, board, 0, func(s *podium.Submission) error {
			buf = append(buf, copySubmission(s))
			if len(buf) == 1024 {
				return send()
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			err = send()
		}
		errc <- err
	}()
	var pending []podium.Submission
	peek := func() *podium.Submission {
		for len(pending) == 0 {
			b, ok := <-ch
			if !ok {
				return nil
			}
			pending = b
		}
		return &pending[0]
	}
	n := 0
	err := dst.Log(ctx, board, 0, func(g *podium.Submission) error {
		n++
		for {
			w := peek()
			switch {
			case w == nil || w.Seq > g.Seq:
				p.add("log seq %d: in the target only (%s)", g.Seq, describeSubmission(g))
				return nil
			case w.Seq < g.Seq:
				p.add("log seq %d: missing from the target", w.Seq)
				pending = pending[1:]
				continue
			}
			if wd, gd := describeSubmission(w), describeSubmission(g); wd != gd {
				p.add("log seq %d: want %s, got %s", g.Seq, wd, gd)
			}
			pending = pending[1:]
			return nil
		}
	})
	if err != nil {
		cancel()
		for range ch {
		}
		<-errc
		return n, err
	}
	for w := peek(); w != nil; w = peek() {
		p.add("log seq %d: missing from the target", w.Seq)
		pending = pending[1:]
	}
	if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
		return n, err
	}
	return n, nil
}

// compareEntries compares the entries the source would load (its table
// with the log after its watermark replayed) with the target's entries
// table as stored, every field, and returns the target's entry and period
// counts.
func compareEntries(ctx context.Context, src, dst podium.Store, b *podium.Board, srcWM uint64, p *problemList) (entries, periods int, err error) {
	want, err := engine.LoadedEntries(ctx, src, b, srcWM)
	if err != nil {
		return 0, 0, err
	}
	pcs, err := dst.Periods(ctx, b.ID)
	if err != nil {
		return 0, 0, err
	}
	var got []podium.Entry
	for _, pc := range pcs {
		err := dst.LoadEntries(ctx, b.ID, pc.ID, func(e *podium.Entry) error {
			c := *e
			c.Keys = slices.Clone(e.Keys)
			c.Meta = slices.Clone(e.Meta)
			got = append(got, c)
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	order := func(a, b podium.Entry) int {
		return cmp.Or(strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	}
	slices.SortFunc(want, order)
	slices.SortFunc(got, order)
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		var c int
		switch {
		case i == len(want):
			c = 1
		case j == len(got):
			c = -1
		default:
			c = order(want[i], got[j])
		}
		switch {
		case c < 0:
			p.add("entry %s/%s: missing from the target (%s)", want[i].Period, want[i].Player, describeEntry(&want[i]))
			i++
		case c > 0:
			p.add("entry %s/%s: in the target only (%s)", got[j].Period, got[j].Player, describeEntry(&got[j]))
			j++
		default:
			if wd, gd := describeEntry(&want[i]), describeEntry(&got[j]); wd != gd {
				p.add("entry %s/%s: want %s, got %s", got[j].Period, got[j].Player, wd, gd)
			}
			i++
			j++
		}
	}
	return len(got), len(pcs), nil
}
