package gcpace

import "testing"

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{10 * mib, 100},  // small heaps keep the default
		{64 * mib, 100},  // the floor equals the heap
		{128 * mib, 50},  // 64 MiB of headroom
		{256 * mib, 25},  // the floor meets a quarter
		{1024 * mib, 25}, // a quarter from there on
		{100 * mib, 64},
	} {
		if got := Percent(c.live); got != c.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}
