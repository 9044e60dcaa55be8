package client_test

import (
	"fmt"
	"testing"

	"github.com/podiumhq/podium/client"
)

// A watch decodes rank_shared and sets every entry's percentile from its
// rank and the event's total, which moves them all when the total does.
func TestWatchRankSharedAndPercentile(t *testing.T) {
	snap := `{"type":"snapshot","board":"b","title":"B","keys":[{"name":"n","order":"desc"}],"period":"all","next_reset":null,` +
		`"seq":3,"snapshot_id":7,"limit":3,"total":3,"entries":[` +
		`{"rank":1,"player":"a","name":"a","keys":[30],"at":"2026-11-30T10:00:00.000Z","meta":{},"rank_shared":1},` +
		`{"rank":2,"player":"b","name":"b","keys":[30],"at":"2026-11-30T10:00:00.000Z","meta":{},"rank_shared":1},` +
		`{"rank":3,"player":"c","name":"c","keys":[10],"at":"2026-11-30T10:00:00.000Z","meta":{},"rank_shared":3}]}`
	delta := `{"type":"delta","board":"b","period":"all","seq":4,"prev_seq":3,"snapshot_id":7,"total":4,"changes":[` +
		`{"rank":2,"prev_rank":2,"player":"b","name":"b","keys":[20],"at":"2026-11-30T11:00:00.000Z","meta":{},"rank_shared":2}],"removed":[]}`
	url, _ := scripted(t, ev("snapshot", snap)+ev("delta", delta))
	got := collect(t, url, 2)
	show := func(es []client.Entry) string {
		s := ""
		for _, e := range es {
			s += fmt.Sprintf("%d:%s:%d:%.2f ", e.Rank, e.Player, e.RankShared, e.Percentile)
		}
		return s
	}
	if s := show(got[0].state.Entries); s != "1:a:1:66.66 2:b:1:33.33 3:c:3:0.00 " {
		t.Fatalf("snapshot: %s", s)
	}
	if s := show(got[1].state.Entries); s != "1:a:1:75.00 2:b:2:50.00 3:c:3:25.00 " {
		t.Fatalf("after the delta (total 4): %s", s)
	}
	for _, tc := range []struct {
		rank, total int
		want        float64
	}{{1, 3, 66.66}, {3, 3, 0}, {1, 1, 0}, {0, 3, 0}, {4, 3, 0}, {1, 0, 0}, {1, 10000000, 99.99}} {
		if got := client.Percentile(tc.rank, tc.total); got != tc.want {
			t.Errorf("Percentile(%d, %d) = %v, want %v", tc.rank, tc.total, got, tc.want)
		}
	}
}
