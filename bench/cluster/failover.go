package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// hotBoard is the one board every writer of the failover phase writes.
const hotBoard = "bench.hot"

// write is one submission's outcome, as a writer saw it.
type write struct {
	node       int
	start, end time.Time
	ok         bool
	status     int    // the answer's status; 0 when there was none
	err        string // the error, for samples
}

// trial is one kill -9 or one pause of the node holding the board's lock.
type trial struct {
	Kind     string // "kill -9" or "SIGSTOP"
	Attempts int    // pauses until the victim was caught holding the lock
	// Stall is the time from the kill (or the pause) to the first
	// successful write on another node; -1 if none came.
	Stall time.Duration
	// Gap is the longest time between two successful writes on the other
	// nodes around the event: what a client of those nodes saw.
	Gap time.Duration
	// Held is how long the pause lasted (SIGSTOP only): until the others
	// wrote again, or --pause-max.
	Held time.Duration
	// OtherOK and OtherErr count the other nodes' writes that ended from
	// the event to a second after the first success.
	OtherOK, OtherErr int
	// VictimErr counts the victim's failed writes after the event, and
	// Rejoin is how long the victim took to serve writes again (restart
	// to ready after a kill; resume to its first success after a pause).
	VictimErr int
	Rejoin    time.Duration
	Samples   []string
}

// failResults are the trials of every run.
type failResults struct {
	nodes int
	kills []*trial
	pause []*trial
}

// runFailover runs, per run, one kill -9 and one pause of the node that
// holds the hot board's row lock while every node writes the board.
func (h *harness) runFailover(ctx context.Context) (*failResults, error) {
	res := &failResults{nodes: h.cfg.Nodes}
	for run := 0; run < h.cfg.Runs; run++ {
		h.progress("failover run %d/%d", run+1, h.cfg.Runs)
		k, p, err := h.failoverOnce(ctx)
		if k != nil {
			res.kills = append(res.kills, k)
		}
		if p != nil {
			res.pause = append(res.pause, p)
		}
		if err != nil {
			return res, fmt.Errorf("failover, run %d: %w", run+1, err)
		}
	}
	return res, nil
}

// writers drive the hot board from every node and keep every outcome.
type writers struct {
	mu     sync.Mutex
	writes []write
	stop   atomic.Bool
	wg     sync.WaitGroup
}

func (h *harness) startWriters(c *cluster) *writers {
	w := &writers{}
	client := &http.Client{Timeout: 2*h.cfg.PauseMax + 30*time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	a := &api{key: h.key, hc: client}
	for i := range c.nodes {
		for k := 0; k < h.cfg.FailWorkers; k++ {
			w.wg.Add(1)
			go func(i, k int) {
				defer w.wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), uint64(k)))
				for !w.stop.Load() {
					nd := c.nodes[i]
					body := fmt.Sprintf(`{"player":"p%d","score":%d}`, rng.IntN(10_000), rng.Int64N(1_000_000_000))
					t0 := time.Now()
					_, err := a.do(context.Background(), http.MethodPost, nd.url+"/v1/boards/"+hotBoard+"/scores", []byte(body))
					wr := write{node: i, start: t0, end: time.Now(), ok: err == nil}
					if err != nil {
						wr.err = err.Error()
						var se *statusError
						if errors.As(err, &se) {
							wr.status = se.Status
						}
					}
					w.mu.Lock()
					w.writes = append(w.writes, wr)
					w.mu.Unlock()
					if err != nil {
						time.Sleep(20 * time.Millisecond) // a failed write is retried after a pause, not spun on
					}
				}
			}(i, k)
		}
	}
	return w
}

func (w *writers) snapshot() []write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

func (w *writers) close() {
	w.stop.Store(true)
	w.wg.Wait()
}

func (h *harness) failoverOnce(ctx context.Context) (kill, pause *trial, err error) {
	c, err := h.startCluster(ctx, spec{Name: "pg x" + fmt.Sprint(h.cfg.Nodes), Nodes: h.cfg.Nodes})
	if err != nil {
		return nil, nil, err
	}
	defer c.close()
	if err := h.api.putBoard(ctx, c.nodes[0].url, hotBoard, boardOneKey); err != nil {
		return nil, nil, err
	}
	if err := h.api.waitTotal(ctx, c.urls(), hotBoard, 0, 30*time.Second); err != nil {
		return nil, nil, err
	}
	w := h.startWriters(c)
	defer w.close()
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return nil, nil, err
	}
	victim := c.nodes[0]

	// kill -9 of the holder.
	attempts, err := h.catchHolder(ctx, c, victim)
	if err != nil {
		return nil, nil, err
	}
	tKill := time.Now()
	victim.signal(syscall.SIGKILL)
	<-victim.done
	if err := sleepCtx(ctx, h.cfg.FailObserve); err != nil {
		return nil, nil, err
	}
	kill = analyse(w.snapshot(), 0, tKill, tKill.Add(h.cfg.FailObserve))
	kill.Kind, kill.Attempts = "kill -9", attempts
	t0 := time.Now()
	if err := h.exec(victim); err != nil {
		return kill, nil, err
	}
	if _, err := waitReady(ctx, victim, 2*time.Minute); err != nil {
		return kill, nil, err
	}
	kill.Rejoin = time.Since(t0)
	h.progress("  kill -9: stall %s, gap %s, other nodes %d ok / %d failed, restart to ready %s",
		fmtDur(kill.Stall), fmtDur(kill.Gap), kill.OtherOK, kill.OtherErr, fmtDur(kill.Rejoin))
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return kill, nil, err
	}

	// A paused holder: SIGSTOP, left paused until the others write again
	// (or --pause-max), then SIGCONT.
	attempts, err = h.catchHolder(ctx, c, victim)
	if err != nil {
		return kill, nil, err
	}
	tStop := time.Now() // within a few ms of the SIGSTOP that caught it
	deadline := tStop.Add(h.cfg.PauseMax)
	for time.Now().Before(deadline) {
		if firstOK(w.snapshot(), 0, tStop, true) != nil {
			break
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			victim.signal(syscall.SIGCONT)
			return kill, nil, err
		}
	}
	held := time.Since(tStop)
	tCont := time.Now()
	victim.signal(syscall.SIGCONT)
	if err := sleepCtx(ctx, h.cfg.FailObserve); err != nil {
		return kill, nil, err
	}
	all := w.snapshot()
	pause = analyse(all, 0, tStop, time.Now())
	pause.Kind, pause.Attempts, pause.Held = "SIGSTOP", attempts, held
	pause.Rejoin = -1
	if f := firstOK(all, 0, tCont, false); f != nil {
		pause.Rejoin = f.end.Sub(tCont)
	}
	h.progress("  SIGSTOP: stall %s (held %s), gap %s, other nodes %d ok / %d failed, victim first success %s after SIGCONT",
		fmtDur(pause.Stall), fmtDur(held), fmtDur(pause.Gap), pause.OtherOK, pause.OtherErr, fmtDur(pause.Rejoin))
	return kill, pause, nil
}

// catchHolder pauses the victim (SIGSTOP) until it is caught holding the
// board's lock: another node's database session waits on the victim's.
// It returns paused, and how many pauses it took; between attempts the
// victim is resumed for a random moment.
func (h *harness) catchHolder(ctx context.Context, c *cluster, victim *node) (int, error) {
	conn, err := pgx.Connect(ctx, h.db)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	// The victim holds the lock when its session sits idle inside a
	// transaction that has an xid (FOR UPDATE assigns one) while another
	// node's session waits on it. A session merely queued for the lock
	// is "active", waiting: pg_blocking_pids names queued sessions too.
	const q = `SELECT count(*) FROM pg_stat_activity v
		WHERE v.application_name = $2 AND v.state = 'idle in transaction' AND v.backend_xid IS NOT NULL
		AND EXISTS (SELECT 1 FROM pg_stat_activity w WHERE w.application_name LIKE $1 AND w.application_name <> $2
			AND v.pid = ANY(pg_blocking_pids(w.pid)))`
	for attempt := 1; attempt <= 200; attempt++ {
		if err := victim.signal(syscall.SIGSTOP); err != nil {
			return attempt, err
		}
		for t0 := time.Now(); time.Since(t0) < 150*time.Millisecond; {
			var n int
			if err := conn.QueryRow(ctx, q, c.schema+"-%", victim.app).Scan(&n); err != nil {
				victim.signal(syscall.SIGCONT)
				return attempt, err
			}
			if n > 0 {
				return attempt, nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		victim.signal(syscall.SIGCONT)
		if err := sleepCtx(ctx, time.Duration(50+rand.IntN(250))*time.Millisecond); err != nil {
			return attempt, err
		}
	}
	return 200, errors.New("the victim was never caught holding the board's lock in 200 pauses")
}

// firstOK returns the first successful write that ended after t, on the
// nodes other than victim (others) or on the victim, nil if none.
func firstOK(ws []write, victim int, t time.Time, others bool) *write {
	var best *write
	for i := range ws {
		w := &ws[i]
		if !w.ok || (w.node != victim) != others || !w.end.After(t) {
			continue
		}
		if best == nil || w.end.Before(best.end) {
			best = w
		}
	}
	return best
}

// analyse computes a trial's figures from the writes, for an event at t
// (the kill or the pause) observed until end.
func analyse(ws []write, victim int, t, end time.Time) *trial {
	tr := &trial{Stall: -1}
	first := firstOK(ws, victim, t, true)
	until := end
	if first != nil {
		tr.Stall = first.end.Sub(t)
		until = first.end.Add(time.Second)
	}
	// The longest gap between successes on the other nodes, from the last
	// one before t to the first one after it.
	var ends []time.Time
	for _, w := range ws {
		if w.ok && w.node != victim {
			ends = append(ends, w.end)
		}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	i, _ := slices.BinarySearchFunc(ends, t, func(a, b time.Time) int { return a.Compare(b) })
	switch {
	case i > 0 && i < len(ends):
		tr.Gap = ends[i].Sub(ends[i-1])
	case i > 0:
		tr.Gap = end.Sub(ends[i-1]) // nothing after: at least this long
	}
	seen := map[string]bool{}
	for _, w := range ws {
		if !w.end.After(t) || w.end.After(until) {
			continue
		}
		switch {
		case w.node == victim:
			if !w.ok {
				tr.VictimErr++
			}
		case w.ok:
			tr.OtherOK++
		default:
			tr.OtherErr++
			if !seen[w.err] && len(tr.Samples) < 3 {
				seen[w.err] = true
				tr.Samples = append(tr.Samples, w.err)
			}
		}
	}
	return tr
}
