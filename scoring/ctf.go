package scoring

import "math"

// Limits on the parameters of the CTF formulas. Within them every
// intermediate value is exact where the originals are exact (integers
// below 2^53) and no int64 overflows.
const (
	MaxCTFValue  = 1_000_000_000 // points of a challenge, before bonuses
	MaxCTFSolves = 1_000_000_000 // solves counted by a formula
)

// CTFdLinear is CTFd's "linear" dynamic value (CTFd/CTFd,
// CTFd/plugins/dynamic_challenges/decay.py, function linear): with s solves
// (the first solver counts as none: s-1 when s > 0),
//
//	value = max(ceil(initial - decay*(s-1)), minimum)
//
// CTFd keeps initial, minimum and decay as integers, so the arithmetic is
// exact and ceil changes nothing; it is kept here for the record.
func CTFdLinear(initial, minimum, decay, solves int64) int64 {
	if solves != 0 {
		solves--
	}
	value := initial - decay*solves
	if value < minimum {
		value = minimum
	}
	return value
}

// CTFdLogarithmic is CTFd's "logarithmic" dynamic value, which is in fact a
// parabola (CTFd/CTFd, CTFd/plugins/dynamic_challenges/decay.py, function
// logarithmic): with s solves (s-1 when s > 0) and a decay of 0 taken as 1,
//
//	value = max(ceil(((minimum - initial) / decay**2) * s**2 + initial), minimum)
//
// evaluated as Python does it: the integer quotient (minimum-initial) /
// decay**2 is a true division rounded to float64, multiplied by the
// integer s**2 converted to float64, then initial is added in float64,
// then math.ceil.
func CTFdLogarithmic(initial, minimum, decay, solves int64) int64 {
	if solves != 0 {
		solves--
	}
	if decay == 0 {
		decay = 1
	}
	q := float64(minimum-initial) / float64(decay*decay)
	// float64() rounds the product on its own: no fused multiply-add.
	v := float64(q*float64(solves*solves)) + float64(initial)
	value := int64(math.Ceil(v))
	if value < minimum {
		value = minimum
	}
	return value
}

// rCTF's curve constants (redpwn/rctf, server/util/scores.ts): p0 = 0.7,
// p1 = 0.96, c0 = -atanh(p0), c1 = atanh(p1). Go's math.Atanh is FreeBSD's
// msun e_atanh.c, the same fdlibm algorithm as V8's Math.atanh.
var (
	rctfC0 = -math.Atanh(0.7)
	rctfC1 = math.Atanh(0.96)
)

// rctfA is a(x) = (1 - tanh(x)) / 2 of rCTF.
func rctfA(x float64) float64 { return (1 - jsTanh(x)) / 2 }

// rctfB is b(x) = (a((c1 - c0)*x + c0) - a(c1)) / (a(c0) - a(c1)) of rCTF.
func rctfB(x float64) float64 {
	return (rctfA(float64((rctfC1-rctfC0)*x)+rctfC0) - rctfA(rctfC1)) / (rctfA(rctfC0) - rctfA(rctfC1))
}

// RCTF is rCTF's dynamic value (redpwn/rctf, server/util/scores.ts,
// getScore): with rl the minimum, rh the maximum, s = max(1, maxSolves)
// and f(x) = rl + (rh - rl) * b(x / s),
//
//	value = round(max(f(solves), f(s)))
//
// in float64 as JavaScript evaluates it, with JavaScript's Math.round
// (halves toward +Inf) and V8's Math.tanh (fdlibm's, see jsTanh). In rCTF
// maxSolves is the solve count of the most-solved challenge.
func RCTF(minimum, maximum, maxSolves, solves int64) int64 {
	rl, rh := float64(minimum), float64(maximum)
	s := math.Max(1, float64(maxSolves))
	f := func(x float64) float64 { return rl + float64((rh-rl)*rctfB(x/s)) }
	return int64(jsRound(math.Max(f(float64(solves)), f(s))))
}

// GZCTF is GZCTF's dynamic value (GZTimeWalker/GZCTF,
// src/GZCTF/Models/Data/GameChallenge.cs, CalculateChallengeScore): with n
// accepted solves, the original score while n <= 1, else
//
//	value = floor(original * (minRate + (1.0 - minRate) * exp((1 - n) / difficulty)))
//
// in float64 (C# double), where 1 - n is an integer converted to double
// before the division. The value tends to original*minRate, its floor.
func GZCTF(original int64, minRate, difficulty float64, n int64) int64 {
	if n <= 1 {
		return original
	}
	r := minRate + float64((1.0-minRate)*math.Exp(float64(1-n)/difficulty))
	return int64(math.Floor(float64(original) * r))
}

// Bonus is percent% of value, rounded half to even, computed exactly in
// integers: the first-blood bonus of a solver. percent is 0 to 100 and
// value 0 to MaxCTFValue.
func Bonus(value, percent int64) int64 {
	p := value * percent
	q, r := p/100, p%100
	if r > 50 || (r == 50 && q%2 == 1) {
		q++
	}
	return q
}

// GZCTFBlood is what a first, second or third blood earns under GZCTF's
// rule (GZTimeWalker/GZCTF, src/GZCTF/Repositories/GameRepository.cs, the
// scoreboard's "update score" step, with the factors of BloodBonus in
// src/GZCTF/Utils/Shared.cs): the challenge's current value times a factor,
// in float32 (C# float), converted back by Convert.ToInt32, which rounds
// half to even:
//
//	factor = float32(permille) / 1000 + 1       each step rounded to float32
//	points = round_half_to_even(float32(float32(value) * factor))
//
// GZCTF keeps the bonus in thousandths (0 to 1000; its default 50, 30, 10
// gives 1.05, 1.03, 1.01). The result is the solve's points, bonus
// included. It differs from value + Bonus(value, permille/10) where the
// float32 product lands just below a half (base 30 at 5%: 31.499998, so
// 31, where the exact rule gives 31.5, so 32), and for values above 2^24,
// which float32 cannot hold exactly, at any factor.
func GZCTFBlood(value, permille int64) int64 {
	factor := float32(float32(permille)/1000) + 1
	p := float32(float32(value) * factor)
	return int64(math.RoundToEven(float64(p)))
}

// jsTanh is tanh as V8 computes Math.tanh: fdlibm's s_tanh.c, by expm1,
// which Go's math.Expm1 implements with the same fdlibm algorithm (FreeBSD
// msun s_expm1.c). Go's own math.Tanh uses another method (Cephes) whose
// results differ in the last bit for some inputs. For x >= 0:
//
//	x < 2^-55:  x*(1+x)
//	x < 1:      -t/(t+2), t = expm1(-2x)
//	x < 22:     1 - 2/(t+2), t = expm1(2x)
//	otherwise:  1
//
// and tanh(-x) = -tanh(x).
func jsTanh(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		if x > 0 {
			return 1
		}
		return -1
	}
	ax := math.Abs(x)
	var z float64
	switch {
	case ax < 0x1p-55:
		return x * (1 + x)
	case ax < 1:
		t := math.Expm1(-2 * ax)
		z = -t / (t + 2)
	case ax < 22:
		t := math.Expm1(2 * ax)
		z = 1 - 2/(t+2)
	default:
		z = 1
	}
	if x < 0 {
		return -z
	}
	return z
}

// jsRound is JavaScript's Math.round: the integer nearest x, halves toward
// +Inf (Go's math.Round takes them away from zero).
func jsRound(x float64) float64 {
	r := math.Round(x)
	if r-x == -0.5 { // a negative half, which Go rounded down
		r++
	}
	return r
}
