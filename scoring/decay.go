package scoring

import "math"

// Decaying points ("current", issue 8 section 3): at each settlement at
// time t, current = current * 2^(-(t - last)/H) + points. Every player's
// points decay by the same factor, so a board keeps them relative to one
// shared time base and never rewrites a player because time passed.
//
// Representation. Time is cut into eras of one half-life H, era e
// starting at e*H after the Unix epoch. A player's entry holds two int64
// keys, (e, K): K is the player's points at the start of era e, in fixed
// point with FracBits fractional bits. The real value at time t is
//
//	current(t) = K * 2^-FracBits * 2^(-(t - e*H)/H)
//
// Every entry of a board holds the same era, so ordering entries by
// (e desc, K desc) is ordering by K, and since the factor
// 2^-FracBits * 2^(-(t-e*H)/H) is the same positive number for all of
// them, it is exactly the order of their real values at every t: no float
// is compared, and the order of the represented values is exact.
//
// A credit of p points dated t adds Scaled(p, t, e, H) =
// round_half_even(p * 2^((t - e*H)/H) * 2^FracBits) to K: one rounding of
// at most half a unit (2^-25 points at the era's start) per credit.
//
// Moving the base. K grows with the factor 2^((t - e*H)/H) < 2 within an
// era, so a settlement dated in a later era e' first moves the whole board
// to e': K' = round_half_even(K / 2^(e'-e)), an exact power of two, once
// per half-life at most (every two years by default). The shift is
// monotone, so no pair of players swaps; two values that differ by less
// than one unit of the new era may become equal, and the engine writes the
// rebase in the board's current order so the earlier rank still wins the
// tie. Headroom: K < 2^62 leaves 2^(62-24) = 2.7e11 points at the start of
// an era, against at most 1e6 per settlement.

// FracBits is the number of fractional bits of K.
const FracBits = 24

// factorBits is the precision of the decay factor: m = 2^(f) * 2^factorBits
// for f in [-1, 1) fits 41 bits, and p * m (p <= 2^20) fits int64.
const factorBits = 40

// MaxCredit is the largest |points| Scaled takes (p * m must fit int64).
const MaxCredit = 1 << 21

// Era returns the era of time t (Unix milliseconds) for a half-life of h
// milliseconds: floor(t / h).
func Era(t, h int64) int64 {
	e := t / h
	if t%h < 0 {
		e--
	}
	return e
}

// Factor returns round(2^((t - e*h)/h) * 2^40), the fixed-point growth of
// a credit dated t in era e. Only this is computed in floating point, from
// one division and one Exp2, with no fused multiply-add: the result is the
// same on every platform Go supports to within the last bit of Exp2 (Go's
// own implementation).
func Factor(t, e, h int64) int64 {
	f := float64(t-e*h) / float64(h)
	return int64(math.Round(math.Ldexp(math.Exp2(f), factorBits)))
}

// Scaled returns the fixed-point credit of p points dated t (Unix ms) on a
// board in era e with half-life h (ms): round_half_even(p * 2^((t-e*h)/h) *
// 2^FracBits). |p| must be at most MaxCredit and t within one era after
// the start of e (corrections dated in earlier eras are fine: the factor
// is then below 1).
func Scaled(p, t, e, h int64) int64 {
	m := Factor(t, e, h)
	return DivRoundHalfEven(p*m, 1<<(factorBits-FracBits))
}

// Rebase returns K moved forward by j >= 0 eras: round_half_even(K / 2^j).
func Rebase(k, j int64) int64 {
	if j <= 0 {
		return k
	}
	if j >= 62 {
		return 0
	}
	return DivRoundHalfEven(k, 1<<j)
}

// Value returns the real value of (e, K) at time t (Unix ms) for a
// half-life of h ms, for display only: K * 2^-FracBits * 2^(-(t-e*h)/h).
func Value(e, k, t, h int64) float64 {
	return math.Ldexp(float64(k), -FracBits) * math.Exp2(-float64(t-e*h)/float64(h))
}
