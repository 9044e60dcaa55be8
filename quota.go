package podium

import "time"

// Daily quotas (issue 9, section 2): a board may cap the number of score
// submissions each player makes per period, "3 attempts at today's daily
// puzzle". The count is of accepted score submissions in the log (a
// refused submission changed nothing and is not counted; an admin's
// delete of an entry gives no attempt back). On a board that resets, the
// window is the board's period; on a board that never resets, it is the
// calendar day in the board's reset.tz (UTC by default).

// MaxQuota is the largest quota.max.
const MaxQuota = 1_000_000

// ECodeQuotaExceeded: a player has used up a board's quota for the current
// window (HTTP 429). The error is a *QuotaError that says when the window
// ends.
const ECodeQuotaExceeded = "quota_exceeded"

// Quota caps each player's score submissions per window on a board.
type Quota struct {
	Max int `json:"max"`
}

func (q *Quota) normalize() error {
	if q == nil {
		return nil
	}
	if q.Max < 1 || q.Max > MaxQuota {
		return Errorf(ECodeInvalid, "quota.max must be 1 to %d (0 in an update removes the quota)", MaxQuota)
	}
	return nil
}

// fullQuota is the update field that sets a board's quota to q: a Max of
// 0 when it has none, which removes it.
func fullQuota(q *Quota) *Quota {
	if q == nil {
		return &Quota{}
	}
	c := *q
	return &c
}

// applyQuota returns the quota a board has after u, given its current one.
func (u *BoardUpdate) applyQuota(cur *Quota) *Quota {
	q := cur
	if u.Quota != nil {
		q = u.Quota
	}
	if q == nil || q.Max == 0 {
		return nil
	}
	c := *q
	return &c
}

// QuotaWindow returns the window that a submission at t counts in on board
// b: its period, or for a board that never resets the day in its reset.tz.
func QuotaWindow(b *Board, t time.Time) Period {
	if b.Reset.Every == Never || b.Reset.Every == "" {
		return PeriodAt(Reset{Every: Daily, TZ: b.Reset.TZ}, t)
	}
	return PeriodAt(b.Reset, t)
}

// InQuotaWindow reports whether a logged submission counts against the
// quota window w of board b: a score, in the window's period (the board's
// period "all" for a board that never resets) and, for a window that is a
// day of a board that never resets, made within it.
func InQuotaWindow(b *Board, w Period, s *Submission) bool {
	if s.Kind != KindScore {
		return false
	}
	if b.Reset.Every == Never || b.Reset.Every == "" {
		return s.Period == PeriodAll && !s.At.Before(w.Start) && s.At.Before(w.End)
	}
	return s.Period == w.ID
}

// QuotaError is the error of a submission over a board's quota: an
// ECodeQuotaExceeded *Error (which errors.As finds) with the end of the
// window.
type QuotaError struct {
	Err *Error
	// ResetsAt is when the window ends and the player may submit again.
	ResetsAt time.Time
	// RetryAfter is the time from the refusal to ResetsAt.
	RetryAfter time.Duration
	// Max is the board's quota, Window the length of the window it
	// counts in (a day, or the board's period), for the rate-limit
	// headers of the refusal.
	Max    int
	Window time.Duration
}

func (q *QuotaError) Error() string { return q.Err.Error() }
func (q *QuotaError) Unwrap() error { return q.Err }
