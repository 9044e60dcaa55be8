package podium

// RankStyle says which ranks a board reports besides its unique ranks.
type RankStyle string

// Rank styles.
const (
	// RankUnique (the default, stored as "") reports only the unique rank:
	// entries equal on every key are ordered by who reached their keys
	// first, then by seq.
	RankUnique RankStyle = "unique"
	// RankShared also reports rank_shared, the standard competition
	// ranking: entries equal on every key share the rank of the first of
	// them, and the next entry's rank counts them all (1, 2, 2, 4).
	RankShared RankStyle = "shared"
)

// normalizeRankStyle checks rank_style and stores the default as "".
func (b *Board) normalizeRankStyle() error {
	switch b.RankStyle {
	case "", RankUnique:
		b.RankStyle = ""
	case RankShared:
	default:
		return Errorf(ECodeInvalid, "rank_style must be unique or shared")
	}
	return nil
}

// ReportsShared reports whether b's answers carry rank_shared.
func (b *Board) ReportsShared() bool { return b.RankStyle == RankShared }

// PercentileHundredths returns the percentile of the entry at 1-based rank
// among n ranked entries, in hundredths of a percent: the share of the n
// entries strictly behind it, rounded down, floor(10000 * (n - rank) / n).
// The leader of 4 entries is at 7500 (75.00%), the last at 0; a lone
// entry is at 0. It returns 0 when n < 1 or rank is not in 1..n.
func PercentileHundredths(rank, n int) int {
	if n < 1 || rank < 1 || rank > n {
		return 0
	}
	return int(10000 * int64(n-rank) / int64(n))
}

// TopPercentCount returns how many entries of n are in the top p percent,
// p given in hundredths of a percent (1 to 10000): ceil(n * p / 10000), so
// that any p above 0 holds the leader of a board with entries.
func TopPercentCount(n, p int) int {
	if n < 1 || p < 1 {
		return 0
	}
	return int((int64(n)*int64(p) + 9999) / 10000)
}
