package podium

import (
	"context"
	"time"
)

// MaxKeepPeriods is the most past periods a board may keep by number
// (keep_periods): ten years of a daily board. Boards that want more keep
// every period (keep_periods absent or 0).
const MaxKeepPeriods = 3660

// normalizeKeepPeriods checks keep_periods: 0 keeps every period, 1 to
// MaxKeepPeriods keeps that many past periods besides the current one.
func (b *Board) normalizeKeepPeriods() error {
	if b.KeepPeriods < 0 || b.KeepPeriods > MaxKeepPeriods {
		return Errorf(ECodeInvalid, "keep_periods must be an integer from 1 to %d, or 0 (or absent) to keep every period", MaxKeepPeriods)
	}
	return nil
}

// KeptFrom returns the id of the oldest period board b keeps at now: the
// period KeepPeriods before the current one, or PeriodsFrom if that is
// later. It returns "" when b keeps every period (KeepPeriods 0, or a
// board that never resets, and no PeriodsFrom). Period ids of one cadence
// sort in time order (byte order), so the periods b no longer keeps are
// exactly those whose id sorts before it.
func (b *Board) KeptFrom(now time.Time) string {
	from := b.keptByNumber(now)
	if b.PeriodsFrom > from {
		return b.PeriodsFrom
	}
	return from
}

// RetainedFloor is the PeriodsFrom of the board that replaces b at now
// with the same cadence: what b no longer keeps stays gone, whatever the
// new keep_periods (raising it, or 0, keeps more from now on; the sweep
// may already have deleted some of an expired period's rows, so bringing
// it back would show a torn period).
func (b *Board) RetainedFloor(now time.Time) string { return b.KeptFrom(now) }

// keptByNumber is KeptFrom by KeepPeriods alone.
func (b *Board) keptByNumber(now time.Time) string {
	n := b.KeepPeriods
	if n <= 0 || b.Reset.Every == Never || b.Reset.Every == "" {
		return ""
	}
	cur := PeriodAt(b.Reset, now)
	y, m, d := cur.Start.Date()
	loc := cur.Start.Location()
	// A time in the middle of the period n periods back: noon (or the
	// 15th) is never near a zone's shift, so one PeriodAt finds it.
	var t time.Time
	switch b.Reset.Every {
	case Daily:
		t = time.Date(y, m, d-n, 12, 0, 0, 0, loc)
	case Weekly:
		t = time.Date(y, m, d-7*n+3, 12, 0, 0, 0, loc)
	default: // Monthly
		t = time.Date(y, m-time.Month(n), 15, 12, 0, 0, 0, loc)
	}
	return PeriodAt(b.Reset, t).ID
}

// Retains reports whether b may have expired periods: it keeps a number
// of them, or an earlier definition did.
func (b *Board) Retains() bool { return b.KeepPeriods > 0 || b.PeriodsFrom != "" }

// PeriodExpired reports whether board b no longer keeps period id at now:
// b keeps a number of periods and id is a period of its cadence older than
// the oldest kept (KeptFrom). The current and previous periods are never
// expired, since KeepPeriods is at least 1.
func (b *Board) PeriodExpired(now time.Time, id string) bool {
	from := b.KeptFrom(now)
	return from != "" && id < from && ValidPeriodID(b.Reset, id)
}

// RetentionStore deletes the periods boards no longer keep (the module
// retention). Both stores implement it.
type RetentionStore interface {
	// PrunePeriods deletes, in one transaction, at most limit rows of
	// board's entries and log whose period sorts before before (byte
	// order, which is time order for the ids of one cadence): the entries
	// first, then the log from its oldest row, stopping at the first row
	// of a period that is kept, and never the board's last logged row
	// (whose seq a store may take as the board's head). It returns the
	// rows deleted; fewer than limit means nothing more is to be deleted
	// until before moves. A row of an old period logged after a kept
	// period's (an admin's delete of an old entry) stays in the log:
	// every reader leaves such periods out.
	PrunePeriods(ctx context.Context, board, before string, limit int) (int, error)
}

// PruneStep is what PrunePeriods does with the rows at the head of a
// board's log, given their seqs and periods in seq order and the board's
// last seq: the range of seqs [from, to] to delete (ok false: none), the
// leading rows of periods before before, the last row left alone.
func PruneStep(seqs []uint64, periods []string, before string, last uint64) (from, to uint64, ok bool) {
	for i, p := range periods {
		if p >= before || seqs[i] >= last {
			break
		}
		if !ok {
			from, ok = seqs[i], true
		}
		to = seqs[i]
	}
	return from, to, ok
}
