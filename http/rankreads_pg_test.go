package http_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/pgtest"
)

// TestRankReadsTwoNodesPostgres: two nodes on one PostgreSQL schema answer
// the same percentiles, shared ranks and top_percent cut for scores sent
// to both, and a rank_style set on one node reaches the other's answers.
func TestRankReadsTwoNodesPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	a := startContestNode(t, dsn, schema, clk, "a")
	b := startContestNode(t, dsn, schema, clk, "b")
	a.must(201, a.do("PUT", "/v1/boards/darts", adminKey, `{"keys":[{"name":"points","order":"desc"}],"public":true}`))
	for i, sc := range []struct {
		p string
		v int
	}{{"ann", 50}, {"bob", 40}, {"cat", 40}, {"dan", 30}, {"eve", 40}} {
		n := a
		if i%2 == 1 {
			n = b
		}
		n.must(200, n.do("POST", "/v1/boards/darts/scores", adminKey, fmt.Sprintf(`{"player":%q,"score":%d}`, sc.p, sc.v)))
	}
	b.must(200, b.do("PUT", "/v1/boards/darts", adminKey, `{"rank_style":"shared"}`))
	want := []string{
		`"player":"ann"`, `"percentile":80.00,"rank_shared":1}`,
		`"player":"bob"`, `"percentile":60.00,"rank_shared":2}`,
		`"player":"cat"`, `"percentile":40.00,"rank_shared":2}`,
		`"player":"eve"`, `"percentile":20.00,"rank_shared":2}`,
		`"player":"dan"`, `"percentile":0.00,"rank_shared":5}`,
	}
	body := eventually(t, a, b, "/v1/boards/darts/entries", "", func(s string) bool { return strings.Contains(s, `"total":5`) && contains(s, want...) })
	if got, order := strings.Index(body, `"ann"`), strings.Index(body, `"dan"`); got > order {
		t.Fatalf("order: %s", body)
	}
	eventually(t, a, b, "/v1/boards/darts/entries?top_percent=50", "", func(s string) bool {
		return contains(s, `"top_percent":50.00,"top_count":3`, `"player":"cat"`) && !strings.Contains(s, `"player":"eve"`)
	})
	eventually(t, a, b, "/v1/boards/darts/entries/eve", "", func(s string) bool { return contains(s, `"rank":4`, `"percentile":20.00,"rank_shared":2}`) })
}
