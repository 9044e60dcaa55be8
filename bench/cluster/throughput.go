package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// tpScenario is one row of the throughput table: a wrk script and how its
// load is spread over the nodes.
type tpScenario struct {
	Name   string
	Script string // a bench/wrk script, "" for a plain GET of Path
	Path   string // with %s for the board
	Batch  bool   // batch.lua: the rate is in scores/s (1000 a request)
	Spread string // "all": every node; "one": the first node only; "own": every node its own board
	Multi  bool   // only on clusters of several nodes
}

// tpScenarios in the order they run: reads on the preloaded board first.
var tpScenarios = []tpScenario{
	{Name: "top100", Path: "/v1/boards/%s/entries?limit=100", Spread: "all"},
	{Name: "rank", Script: "rank.lua", Spread: "all"},
	{Name: "single", Script: "submit.lua", Spread: "all"},
	{Name: "single, all to n1", Script: "submit.lua", Spread: "one", Multi: true},
	{Name: "single, own board per node", Script: "submit.lua", Spread: "own", Multi: true},
	{Name: "batch-1000", Script: "batch.lua", Batch: true, Spread: "all"},
}

// tpBoard is the board every throughput scenario uses (the name
// bench/wrk's scripts default to).
const tpBoard = "bench.wrk"

// measure is one scenario's figures in one run.
type measure struct {
	Rate     float64 // 2xx requests/s, or scores/s for batches
	P50, P99 time.Duration
	Non2xx   uint64
	SockErrs uint64
	Load     load
}

// tpResults holds every run's measures, by spec name and scenario.
type tpResults struct {
	specs []spec
	runs  int
	m     map[string][]*measure // spec|scenario -> one per run (nil: not measured)
	idle  map[string][]*measure // spec -> no load, per run
	fixed map[string][]*measure // spec -> fixed-rate submits, per run
}

func tpKey(spec, scenario string) string { return spec + "|" + scenario }

func (r *tpResults) put(m map[string][]*measure, key string, run int, x *measure) {
	if m[key] == nil {
		m[key] = make([]*measure, r.runs)
	}
	m[key][run] = x
}

// throughputSpecs are the clusters compared, the reference first.
func throughputSpecs(n int, redis bool) []spec {
	s := []spec{{Name: "sqlite x1", Nodes: 1, SQLite: true}, {Name: "pg x1", Nodes: 1}}
	if redis {
		s = append(s, spec{Name: "pg+redis x1", Nodes: 1, Redis: true})
	}
	s = append(s, spec{Name: "pg x" + strconv.Itoa(n), Nodes: n})
	if redis {
		s = append(s, spec{Name: "pg+redis x" + strconv.Itoa(n), Nodes: n, Redis: true})
	}
	return s
}

// runThroughput measures every spec in every run; within a run the specs
// run one after the other, so that every run holds its own reference.
func (h *harness) runThroughput(ctx context.Context) (*tpResults, error) {
	res := &tpResults{specs: throughputSpecs(h.cfg.Nodes, h.redisURL != ""), runs: h.cfg.Runs,
		m: map[string][]*measure{}, idle: map[string][]*measure{}, fixed: map[string][]*measure{}}
	for run := 0; run < h.cfg.Runs; run++ {
		for _, sp := range res.specs {
			h.progress("throughput run %d/%d: %s", run+1, h.cfg.Runs, sp.Name)
			if err := h.throughputOnce(ctx, sp, run, res); err != nil {
				return res, fmt.Errorf("throughput, %s, run %d: %w", sp.Name, run+1, err)
			}
		}
	}
	return res, nil
}

func (h *harness) throughputOnce(ctx context.Context, sp spec, run int, res *tpResults) error {
	c, err := h.startCluster(ctx, sp)
	if err != nil {
		return err
	}
	defer c.close()
	urls := c.urls()
	boards := []string{tpBoard}
	if sp.Nodes > 1 {
		for _, nd := range c.nodes {
			boards = append(boards, tpBoard+"."+nd.name)
		}
	}
	t0 := time.Now()
	for _, b := range boards {
		if err := h.api.putBoard(ctx, urls[0], b, boardOneKey); err != nil {
			return err
		}
		if err := h.api.waitTotal(ctx, urls, b, 0, 30*time.Second); err != nil { // every node knows the board
			return err
		}
		err := h.api.fill(ctx, urls, b, 1, h.cfg.Players, 5000, 4, func(i int) string {
			return strconv.Itoa(int(hashScore(uint64(i))))
		})
		if err != nil {
			return err
		}
		if err := h.api.waitTotal(ctx, urls, b, int64(h.cfg.Players), time.Minute); err != nil {
			return err
		}
	}
	h.progress("  preloaded %d boards of %d players in %s", len(boards), h.cfg.Players, time.Since(t0).Round(time.Millisecond))

	if !sp.SQLite {
		// What the cluster costs the database with nothing to do:
		// polling, and nothing else. A backend that goes idle flushes its
		// counters only after 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL):
		// let the preload's settle first.
		if err := sleepCtx(ctx, 11*time.Second); err != nil {
			return err
		}
		a := h.snapshot(ctx, c)
		if err := sleepCtx(ctx, h.cfg.Duration); err != nil {
			return err
		}
		res.put(res.idle, sp.Name, run, &measure{Load: rate(a, h.snapshot(ctx, c))})
	}
	for _, sc := range tpScenarios {
		if sc.Multi && sp.Nodes < 2 {
			continue
		}
		m, err := h.wrkScenario(ctx, c, sc)
		if err != nil {
			return err
		}
		res.put(res.m, tpKey(sp.Name, sc.Name), run, m)
		h.progress("  %-28s %10.0f/s  p50 %-9s p99 %-9s non-2xx %d, socket errors %d", sc.Name, m.Rate,
			fmtDur(m.P50), fmtDur(m.P99), m.Non2xx, m.SockErrs)
	}
	if !sp.SQLite && h.cfg.FixedRate > 0 {
		m, err := h.fixedRate(ctx, c, h.cfg.FixedRate, h.cfg.Duration)
		if err != nil {
			return err
		}
		res.put(res.fixed, sp.Name, run, m)
	}
	return nil
}

// wrkJobs spreads a scenario over the cluster's nodes. Every cluster gets
// the same client: --nodes wrk processes of one thread each, the
// connections split evenly between them; process i loads node i (all of
// them the first node on a single-node cluster, or for "one").
func (h *harness) wrkJobs(c *cluster, sc tpScenario) []wrkJob {
	conns := h.cfg.Conns
	if sc.Batch {
		conns = h.cfg.BatchConns
	}
	var jobs []wrkJob
	for i, n := range spreadConns(conns, h.cfg.Nodes) {
		nd, board := c.nodes[0], tpBoard
		if sc.Spread != "one" {
			nd = c.nodes[i%len(c.nodes)]
		}
		if sc.Spread == "own" {
			board = tpBoard + "." + nd.name
		}
		j := wrkJob{URL: nd.url, Script: sc.Script, Threads: 1, Conns: n,
			Env: []string{"PLAYERS=" + strconv.Itoa(h.cfg.Players), "BOARD=" + board}}
		if sc.Script == "" {
			j.URL = nd.url + fmt.Sprintf(sc.Path, board)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// wrkScenario runs a warm-up and then the measured wrk run of sc.
func (h *harness) wrkScenario(ctx context.Context, c *cluster, sc tpScenario) (*measure, error) {
	jobs := h.wrkJobs(c, sc)
	if h.cfg.Warmup > 0 {
		if _, err := h.wrk.run(ctx, jobs, h.cfg.Warmup); err != nil {
			return nil, err
		}
	}
	a := h.snapshot(ctx, c)
	r, err := h.wrk.run(ctx, jobs, h.cfg.Duration)
	if err != nil {
		return nil, err
	}
	m := &measure{Rate: r.Rate, P50: r.Hist.quantile(0.5), P99: r.Hist.quantile(0.99), Non2xx: r.Non2xx,
		SockErrs: r.SockErrs, Load: rate(a, h.snapshot(ctx, c))}
	if sc.Batch {
		m.Rate *= 1000
	}
	return m, nil
}

// fixedRate submits single scores at a fixed total rate, spread over the
// nodes in turn, for d: the database's cost per write, at the same rate
// with and without Redis. Rate is the rate achieved.
func (h *harness) fixedRate(ctx context.Context, c *cluster, perSec int, d time.Duration) (*measure, error) {
	const workers = 32
	ticks := make(chan int, workers)
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	lat := make([][]time.Duration, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := range ticks {
				nd := c.nodes[i%len(c.nodes)]
				body := fmt.Sprintf(`{"player":"p%d","score":%d}`, 1+int(hashScore(uint64(i)))%h.cfg.Players, hashScore(uint64(i)^0x5bd1e995))
				t0 := time.Now()
				_, err := h.api.do(ctx, http.MethodPost, nd.url+"/v1/boards/"+tpBoard+"/scores", []byte(body))
				if err != nil {
					failed.Add(1)
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
				ok.Add(1)
			}
		}(w)
	}
	a := h.snapshot(ctx, c)
	start := time.Now()
	every := time.Second / time.Duration(perSec)
	dropped := 0
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * every)
		if at.Sub(start) >= d || ctx.Err() != nil {
			break
		}
		if wait := time.Until(at); wait > 0 {
			time.Sleep(wait)
		}
		select {
		case ticks <- i:
		default:
			dropped++ // every worker busy: the rate is not held
		}
	}
	close(ticks)
	wg.Wait()
	b := h.snapshot(ctx, c)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	m := &measure{Rate: float64(ok.Load()) / time.Since(start).Seconds(), P50: quantile(all, 0.5), P99: quantile(all, 0.99),
		Non2xx: uint64(failed.Load()), SockErrs: uint64(dropped), Load: rate(a, b)}
	return m, ctx.Err()
}

// hashScore spreads i over 1..1e9 (splitmix64), deterministic so that
// every run preloads the same board.
func hashScore(i uint64) int64 {
	i += 0x9e3779b97f4a7c15
	i = (i ^ i>>30) * 0xbf58476d1ce4e5b9
	i = (i ^ i>>27) * 0x94d049bb133111eb
	i ^= i >> 31
	return int64(i%1_000_000_000) + 1
}

// column returns one figure of a scenario over the runs (NaN where it was
// not measured).
func column(ms []*measure, f func(*measure) float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = math.NaN()
		if m != nil {
			out[i] = f(m)
		}
	}
	return out
}
