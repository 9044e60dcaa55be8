// Package ratelimit decides whether a request may go ahead, with the
// generic cell rate algorithm (GCRA), over a store of buckets that is
// either in this process (Memory) or shared by every node (the Redis and
// PostgreSQL adapters implement Store), and a Limiter that falls back to
// the process's own buckets while the shared store fails.
//
// Why GCRA rather than a token bucket: both admit the same traffic (GCRA
// is a token bucket written as one timestamp), but GCRA keeps a single
// number per bucket, the theoretical arrival time (TAT), and updates it
// with one max and one addition. No refill step, no floating-point tokens,
// no second column: a Redis value, a PostgreSQL row updated in one
// statement, and a map entry all hold one int64, and the arithmetic below
// is the one definition every backend follows.
//
// Times are whole microseconds since the Unix epoch: exact in a Lua
// number (a double holds integers to 2^53, about 285 years of µs) and in
// a PostgreSQL bigint.
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit is a quota: at most Quota requests in any Window, of which all
// Quota may come at once (the burst) when the bucket is full. A zero Limit
// (Quota 0) means no limit.
type Limit struct {
	Quota  int
	Window time.Duration
}

// Unlimited reports whether l limits nothing.
func (l Limit) Unlimited() bool { return l.Quota <= 0 || l.Window <= 0 }

// Interval is GCRA's emission interval T in µs: one request's share of
// the window. At least 1 µs.
func (l Limit) Interval() int64 {
	t := l.Window.Microseconds() / int64(l.Quota)
	return max(t, 1)
}

// Tolerance is how far ahead of now the TAT may be after admitting a
// request: the window, so that a full bucket admits Quota requests at once.
func (l Limit) Tolerance() int64 { return int64(l.Quota) * l.Interval() }

// String formats l as ParseLimit reads it ("600/1m0s"); "off" when
// unlimited.
func (l Limit) String() string {
	if l.Unlimited() {
		return "off"
	}
	return strconv.Itoa(l.Quota) + "/" + l.Window.String()
}

// ParseLimit reads "N/window" (for example "600/1m", "20/1s") or "off".
// A window without a number means one unit ("/m" is not accepted; write
// "1m"). N is 1 to 1e9, the window 1ms to 24h.
func ParseLimit(s string) (Limit, error) {
	if s == "off" || s == "0" {
		return Limit{}, nil
	}
	n, w, ok := strings.Cut(s, "/")
	if !ok {
		return Limit{}, fmt.Errorf("%q is not a limit: want N/window, e.g. 600/1m, or off", s)
	}
	q, err := strconv.Atoi(n)
	if err != nil || q < 1 || q > 1e9 {
		return Limit{}, fmt.Errorf("%q: the quota must be a whole number from 1 to 1000000000", s)
	}
	switch w { // common shorthands
	case "s", "m", "h":
		w = "1" + w
	}
	d, err := time.ParseDuration(w)
	if err != nil || d < time.Millisecond || d > 24*time.Hour {
		return Limit{}, fmt.Errorf("%q: the window must be a duration from 1ms to 24h (e.g. 1s, 1m)", s)
	}
	return Limit{Quota: q, Window: d}, nil
}

// Result is a decision and what the RateLimit headers report.
type Result struct {
	Allowed bool
	// Remaining is how many more requests of cost 1 the bucket would admit
	// now.
	Remaining int
	// Reset is how long until the bucket is full again (Quota remaining).
	Reset time.Duration
	// RetryAfter is, when not Allowed, how long until the request would
	// be admitted; 0 when Allowed.
	RetryAfter time.Duration
}

// Micros converts t to the stores' unit.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// Decide is GCRA: given the bucket's stored TAT (0 for a new bucket), the
// time now and the cost of the request, it returns whether it is admitted
// and the TAT to store (unchanged when denied). Cost 0 asks whether a
// request of cost 1 would be admitted and never changes the TAT: a peek.
//
// The rule (ITU-T I.371 GCRA, virtual scheduling form): with T the
// emission interval and τ the tolerance, a request of cost c arriving at
// now is admitted iff max(TAT, now) + c·T − now ≤ τ, and then
// TAT := max(TAT, now) + c·T.
func Decide(tat, now int64, l Limit, cost int) (newTAT int64, r Result) {
	if l.Unlimited() {
		return tat, Result{Allowed: true, Remaining: l.Quota}
	}
	c := cost
	if c <= 0 {
		c = 1
	}
	base := max(tat, now)
	next := base + int64(c)*l.Interval()
	if next-now > l.Tolerance() {
		return tat, Denied(base, now, l, c)
	}
	if cost <= 0 {
		return tat, Admitted(base, now, l)
	}
	return next, Admitted(next, now, l)
}

// Refunded is the TAT after a refund of cost (see Refunder): moved back
// by cost·T, never before now.
func Refunded(tat, now int64, l Limit, cost int) int64 {
	if l.Unlimited() || cost <= 0 || tat <= now {
		return tat
	}
	return max(tat-int64(cost)*l.Interval(), now)
}

// Admitted is the result of an admitted request after which the bucket's
// TAT is tat. The stores that decide elsewhere (a Lua script, an SQL
// statement) report their outcome through it and Denied, so that the
// headers are computed in one place.
func Admitted(tat, now int64, l Limit) Result {
	used := max(tat-now, 0)
	return Result{Allowed: true, Remaining: int((l.Tolerance() - used) / l.Interval()),
		Reset: time.Duration(used) * time.Microsecond}
}

// Denied is the result of a request of cost refused while the bucket's
// TAT, taken as no earlier than now, is base.
func Denied(base, now int64, l Limit, cost int) Result {
	used := max(base-now, 0)
	wait := used + int64(cost)*l.Interval() - l.Tolerance()
	return Result{Remaining: int(max(l.Tolerance()-used, 0) / l.Interval()),
		Reset: time.Duration(used) * time.Microsecond, RetryAfter: time.Duration(max(wait, 1)) * time.Microsecond}
}
