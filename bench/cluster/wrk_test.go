package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// wrkOutput is wrk's own report with the wrapper's lines after it, as
// wrk 4.1 prints them.
const wrkOutput = `Running 2s test @ http://127.0.0.1:18999/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    80.12us   30.00us   9.00ms   90.00%
    Req/Sec    50.00k     1.00k   52.00k    70.00%
  100010 requests in 2.00s, 11.00MB read
  Non-2xx or 3xx responses: 10
Requests/sec:  50005.00
Transfer/sec:      5.50MB
cluster-summary 100010 2000000 1 2 3 10 4
cluster-lat 18 50000
cluster-lat 60 49000
cluster-lat 9000 1010
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(strings.NewReader(wrkOutput))
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 100010 || r.Non2xx != 10 || r.SockErrs != 1+2+3+4 {
		t.Fatalf("counts: %+v", r)
	}
	// 2xx answers over wrk's own measured duration (2 s).
	if r.Rate != 50000 {
		t.Fatalf("rate %v, want 50000 (100000 2xx answers in 2 s)", r.Rate)
	}
	if got := r.Hist.quantile(0.5); got != 60*time.Microsecond {
		t.Errorf("p50 %v, want 60µs", got)
	}
	if got := r.Hist.quantile(0.99); got != 9*time.Millisecond {
		t.Errorf("p99 %v, want 9ms", got)
	}
}

func TestParseWrkRefusesWhatItCannotRead(t *testing.T) {
	for name, out := range map[string]string{
		"NoSummary":        "Requests/sec: 1000\ncluster-lat 10 5\n",
		"ShortSummary":     "cluster-summary 1 2 3\n",
		"NegativeSummary":  "cluster-summary -1 2000000 0 0 0 0 0\n",
		"BadLatencyCount":  "cluster-summary 1 2000000 0 0 0 0 0\ncluster-lat 10 x\n",
		"BadLatencyFields": "cluster-summary 1 2000000 0 0 0 0 0\ncluster-lat 10\n",
	} {
		t.Run(name, func(t *testing.T) {
			if r, err := parseWrk(strings.NewReader(out)); err == nil {
				t.Fatalf("parsed %q as %+v", out, r)
			}
		})
	}
}

func TestMergeWrkAddsRatesAndHistograms(t *testing.T) {
	a, _ := parseWrk(strings.NewReader("cluster-summary 1000 1000000 0 0 0 0 0\ncluster-lat 100 1000\n"))
	b, _ := parseWrk(strings.NewReader("cluster-summary 500 1000000 0 1 0 100 0\ncluster-lat 300 500\n"))
	m := mergeWrk([]*wrkResult{a, b})
	if m.Rate != 1000+400 || m.Requests != 1500 || m.Non2xx != 100 || m.SockErrs != 1 {
		t.Fatalf("merged %+v", m)
	}
	// 1000 of 1500 values are 100µs: p66 is 100µs, p67 is 300µs.
	if got := m.Hist.quantile(0.66); got != 100*time.Microsecond {
		t.Errorf("p66 %v", got)
	}
	if got := m.Hist.quantile(0.67); got != 300*time.Microsecond {
		t.Errorf("p67 %v", got)
	}
	if m.ok() != 1400 {
		t.Errorf("ok %d", m.ok())
	}
}

func TestSpreadConns(t *testing.T) {
	for _, tc := range []struct {
		conns, n int
		want     []int
	}{
		{64, 3, []int{22, 21, 21}},
		{64, 1, []int{64}},
		{6, 3, []int{2, 2, 2}},
		{4, 3, []int{2, 1, 1}},
		{2, 3, []int{1, 1, 1}}, // at least one each
	} {
		got := spreadConns(tc.conns, tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("spreadConns(%d, %d) = %v", tc.conns, tc.n, got)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("spreadConns(%d, %d) = %v, want %v", tc.conns, tc.n, got, tc.want)
			}
		}
	}
}

func TestWrkResultOkNeverNegative(t *testing.T) {
	r := &wrkResult{Requests: 3, Non2xx: 5}
	if r.ok() != 0 {
		t.Fatal(r.ok())
	}
	if math.IsNaN(mergeWrk(nil).Rate) {
		t.Fatal("NaN rate")
	}
}

func TestWrkJobsGiveEveryClusterTheSameClient(t *testing.T) {
	h := &harness{cfg: &config{Conns: 64, BatchConns: 6, Nodes: 3, Players: 100}}
	one := &cluster{nodes: []*node{{name: "n1", url: "http://a"}}}
	three := &cluster{nodes: []*node{{name: "n1", url: "http://a"}, {name: "n2", url: "http://b"}, {name: "n3", url: "http://c"}}}
	type want struct {
		url, board string
		conns      int
	}
	check := func(name string, jobs []wrkJob, ws []want) {
		t.Helper()
		if len(jobs) != len(ws) {
			t.Fatalf("%s: %d jobs, want %d", name, len(jobs), len(ws))
		}
		for i, j := range jobs {
			board := ""
			for _, e := range j.Env {
				if b, ok := strings.CutPrefix(e, "BOARD="); ok {
					board = b
				}
			}
			if j.URL != ws[i].url || board != ws[i].board || j.Conns != ws[i].conns || j.Threads != 1 {
				t.Errorf("%s: job %d = %+v, want %+v", name, i, j, ws[i])
			}
		}
	}
	single := tpScenarios[2]
	check("one node", h.wrkJobs(one, single), []want{{"http://a", tpBoard, 22}, {"http://a", tpBoard, 21}, {"http://a", tpBoard, 21}})
	check("three nodes", h.wrkJobs(three, single), []want{{"http://a", tpBoard, 22}, {"http://b", tpBoard, 21}, {"http://c", tpBoard, 21}})
	check("all to n1", h.wrkJobs(three, tpScenarios[3]), []want{{"http://a", tpBoard, 22}, {"http://a", tpBoard, 21}, {"http://a", tpBoard, 21}})
	check("own boards", h.wrkJobs(three, tpScenarios[4]),
		[]want{{"http://a", tpBoard + ".n1", 22}, {"http://b", tpBoard + ".n2", 21}, {"http://c", tpBoard + ".n3", 21}})
	check("batch", h.wrkJobs(three, tpScenarios[5]), []want{{"http://a", tpBoard, 2}, {"http://b", tpBoard, 2}, {"http://c", tpBoard, 2}})
	top := h.wrkJobs(three, tpScenarios[0])
	if top[1].URL != "http://b/v1/boards/"+tpBoard+"/entries?limit=100" || top[1].Script != "" {
		t.Errorf("top100 job %+v", top[1])
	}
}
