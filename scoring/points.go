package scoring

// Tournament points (issue 8, section 3): a final rank r of a tournament of
// weight w pays round_half_to_even(w / r) points. Integer arithmetic only,
// so every platform and every node pays the same.

// RankPoints returns round_half_to_even(weight / rank) for weight >= 0 and
// rank >= 1 (0 for a rank below 1): the quotient rounded to the nearest
// integer, a remainder of exactly half going to the even neighbour (1000/16
// = 62.5 pays 62, 50/3 = 16.67 pays 17).
func RankPoints(weight, rank int64) int64 {
	if rank < 1 || weight <= 0 {
		return 0
	}
	return DivRoundHalfEven(weight, rank)
}

// DivRoundHalfEven returns n/d rounded to the nearest integer, ties to
// even, for d > 0 and any n (symmetric: -n gives the negation).
func DivRoundHalfEven(n, d int64) int64 {
	neg := n < 0
	if neg {
		n = -n
	}
	q, r := n/d, n%d
	// Compare 2r with d without overflow: r < d, so r >= d-r means 2r >= d.
	switch {
	case r > d-r:
		q++
	case r == d-r && q%2 == 1:
		q++
	}
	if neg {
		return -q
	}
	return q
}
