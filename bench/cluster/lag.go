package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// lagBoard is the board of the lag phase.
const lagBoard = "bench.lag"

// lagMode is one way nodes learn what others wrote.
type lagMode struct {
	Name  string
	Spec  spec
	Note  string // why it was skipped, when it was
	Local bool   // the single-node reference: A is B
}

// lagSamples are one run's measurements in one mode. Each duration is
// from the moment node A acknowledged the submission to the moment it was
// seen on node B; a submission seen before its acknowledgement counts as 0.
type lagSamples struct {
	RestAB, SSEAB       []time.Duration // submitted on A, seen on B
	RestBB, SSEBB       []time.Duration // submitted on B, seen on B (same node)
	Missed              int             // not seen within the deadline (on either path)
	EarlyRest, EarlySSE int             // seen before the submitter had its answer
	// Listening is how many nodes had a database session LISTENing, and
	// Notices how many notifications the channel carried per submission.
	Listening int
	Notices   float64
}

// lagResults hold every mode's samples, one set per run.
type lagResults struct {
	modes []lagMode
	runs  map[string][]*lagSamples
}

// lagModes lists the modes: the reference, Redis, LISTEN/NOTIFY, polling.
func (h *harness) lagModes(ctx context.Context) []lagMode {
	extra := []string{}
	if h.cfg.LagCoalesce > 0 {
		extra = append(extra, "--stream-coalesce", h.cfg.LagCoalesce.String())
	}
	modes := []lagMode{{Name: "sqlite x1 (same node)", Spec: spec{Name: "sqlite x1", Nodes: 1, SQLite: true, Extra: extra}, Local: true}}
	if h.redisURL != "" {
		modes = append(modes, lagMode{Name: "pg+redis x2", Spec: spec{Name: "pg+redis x2", Nodes: 2, Redis: true, Extra: extra}})
	} else {
		modes = append(modes, lagMode{Name: "pg+redis x2", Note: "no Redis (--redis-server \"\")"})
	}
	modes = append(modes, lagMode{Name: "pg x2 (no Redis)", Spec: spec{Name: "pg x2", Nodes: 2, Extra: extra}})
	poll := h.cfg.LagArgs["poll"]
	if poll == nil {
		poll = h.pollOnlyFlags(ctx)
	}
	if poll == nil {
		modes = append(modes, lagMode{Name: "pg x2 (polling only)",
			Note: "`podium serve` has no flag that turns notices off: polling alone cannot be measured (give one with --poll-only-flags)"})
	} else {
		modes = append(modes, lagMode{Name: "pg x2 (polling only)", Spec: spec{Name: "pg x2 poll", Nodes: 2, Extra: append(extra, poll...)}})
	}
	return modes
}

// notifyFlag matches a serve flag that could turn PostgreSQL notices off.
var notifyFlag = regexp.MustCompile(`(?m)^\s+-(-?)((?:no-)?(?:notify|notices|listen)[a-z-]*)\b(.*)$`)

// pollOnlyFlags looks in `podium serve -h` for a flag that turns notices
// off and returns the flags that do, nil if there is none.
func (h *harness) pollOnlyFlags(ctx context.Context) []string {
	out, _ := exec.CommandContext(ctx, h.podium, "serve", "-h").CombinedOutput()
	m := notifyFlag.FindSubmatch(out)
	if m == nil {
		return nil
	}
	name := string(m[2])
	if strings.HasPrefix(name, "no-") {
		return []string{"--" + name}
	}
	return []string{"--" + name + "=false"}
}

// runLag measures, per mode and run, how long a submission acknowledged
// by node A takes to show on node B: through an open SSE stream on B and
// through B's REST read of the player's entry.
func (h *harness) runLag(ctx context.Context) (*lagResults, error) {
	res := &lagResults{modes: h.lagModes(ctx), runs: map[string][]*lagSamples{}}
	for run := 0; run < h.cfg.Runs; run++ {
		for _, m := range res.modes {
			if m.Note != "" {
				continue
			}
			h.progress("lag run %d/%d: %s", run+1, h.cfg.Runs, m.Name)
			s, err := h.lagOnce(ctx, m, run)
			if err != nil {
				return res, fmt.Errorf("lag, %s, run %d: %w", m.Name, run+1, err)
			}
			res.runs[m.Name] = append(res.runs[m.Name], s)
			h.progress("  REST A->B p50 %s p99 %s; SSE A->B p50 %s p99 %s; SSE same node p50 %s p99 %s; missed %d",
				fmtDur(quantile(s.RestAB, .5)), fmtDur(quantile(s.RestAB, .99)), fmtDur(quantile(s.SSEAB, .5)),
				fmtDur(quantile(s.SSEAB, .99)), fmtDur(quantile(s.SSEBB, .5)), fmtDur(quantile(s.SSEBB, .99)), s.Missed)
		}
	}
	return res, nil
}

func (h *harness) lagOnce(ctx context.Context, m lagMode, run int) (*lagSamples, error) {
	c, err := h.startCluster(ctx, m.Spec)
	if err != nil {
		return nil, err
	}
	defer c.close()
	a, b := c.nodes[0], c.nodes[len(c.nodes)-1]
	if err := h.api.putBoard(ctx, a.url, lagBoard, boardOneKey); err != nil {
		return nil, err
	}
	if err := h.api.waitTotal(ctx, []string{b.url}, lagBoard, 0, 30*time.Second); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := openStream(sctx, b.url, lagBoard, 10)
	if err != nil {
		return nil, err
	}
	s := &lagSamples{}
	if c.schema != "" {
		if s.Listening, err = h.listening(ctx, c); err != nil {
			return nil, err
		}
	}
	var notices0 int64
	if c.listener != nil {
		notices0 = c.listener.n.Load()
	}
	defer func() {
		if c.listener != nil {
			s.Notices = float64(c.listener.n.Load()-notices0) / float64(2*h.cfg.LagSamples)
		}
	}()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(run)))
	for i := 0; i < 2*h.cfg.LagSamples && ctx.Err() == nil; i++ {
		from := a // on the reference, a is b
		if i%2 == 1 {
			from = b
		}
		player := fmt.Sprintf("lag-%d-%d", run, i)
		score := int64(1_000_000_000_000 + run*100_000 + i) // each a new first place: it enters B's top 10
		rest, sse, err := h.probe(ctx, from, b, st, player, score)
		if err != nil {
			return nil, err
		}
		if rest.early {
			s.EarlyRest++
		}
		if sse.early {
			s.EarlySSE++
		}
		switch {
		case rest.d < 0 || sse.d < 0:
			s.Missed++
		case from == b: // the reference's only node is both A and B
			s.RestBB, s.SSEBB = append(s.RestBB, rest.d), append(s.SSEBB, sse.d)
		default:
			s.RestAB, s.SSEAB = append(s.RestAB, rest.d), append(s.SSEAB, sse.d)
		}
		// A probe ends just after a stream event, which follows the
		// nodes' poll and coalescing ticks: a pause drawn uniformly over
		// the longest of those periods puts the next probe at a uniform
		// phase of each, so that probes sample every phase of the polling.
		if err := sleepCtx(ctx, time.Duration(rng.Int64N(int64(h.lagPeriod())))); err != nil {
			return nil, err
		}
	}
	return s, ctx.Err()
}

// sighting is when a probe's submission was seen, counted from the
// moment its submitter had the answer: d is -1 if it was not seen within
// the deadline, and 0 (early true) if it was seen before the answer came.
type sighting struct {
	d     time.Duration
	early bool
}

// probe submits one score on from and measures when node to shows it: by
// polling its REST read of the entry, and on the open stream st.
func (h *harness) probe(ctx context.Context, from, to *node, st *stream, player string, score int64) (rest, sse sighting, err error) {
	const within = 10 * time.Second
	seenSSE := st.expect(player)
	polled := make(chan time.Time, 1)
	pctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	go func() {
		u := to.url + "/v1/boards/" + lagBoard + "/entries/" + player
		for pctx.Err() == nil {
			_, err := h.api.do(pctx, http.MethodGet, u, nil)
			if err == nil {
				polled <- time.Now()
				return
			}
			sleepCtx(pctx, h.cfg.LagPoll)
		}
	}()
	body := fmt.Sprintf(`{"player":%q,"score":%d}`, player, score)
	if _, err := h.api.do(ctx, http.MethodPost, from.url+"/v1/boards/"+lagBoard+"/scores", []byte(body)); err != nil {
		return rest, sse, fmt.Errorf("submit on %s: %w", from.name, err)
	}
	ack := time.Now()
	at := func(t time.Time) sighting { return sighting{d: max(t.Sub(ack), 0), early: t.Before(ack)} }
	rest, sse = sighting{d: -1}, sighting{d: -1}
	deadline := time.After(within)
	for rest.d < 0 || sse.d < 0 {
		select {
		case t := <-polled:
			rest = at(t)
		case t := <-seenSSE:
			sse = at(t)
		case <-deadline:
			st.forget(player)
			return rest, sse, nil
		case <-ctx.Done():
			return rest, sse, ctx.Err()
		case err := <-st.failed:
			return rest, sse, fmt.Errorf("stream on %s: %w", to.name, err)
		}
	}
	return rest, sse, nil
}

// stream reads one SSE stream and notes when each awaited player first
// appears in a snapshot or a delta.
type stream struct {
	failed chan error

	mu      sync.Mutex
	waiting map[string]chan time.Time
}

// sseEvent is the part of a stream event the harness reads.
type sseEvent struct {
	Type    string `json:"type"`
	Entries []struct {
		Player string `json:"player"`
	} `json:"entries"`
	Changes []struct {
		Player string `json:"player"`
	} `json:"changes"`
}

// openStream opens the SSE stream of board's top limit on base and waits
// for its first snapshot.
func openStream(ctx context.Context, base, board string, limit int) (*stream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/v1/boards/%s/stream?limit=%d", base, board, limit), nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, fmt.Errorf("open stream: status %d", res.StatusCode)
	}
	st := &stream{failed: make(chan error, 1), waiting: map[string]chan time.Time{}}
	first := make(chan struct{})
	go func() {
		defer res.Body.Close()
		rd := bufio.NewReaderSize(res.Body, 64<<10)
		var once sync.Once
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				if ctx.Err() == nil {
					st.failed <- err
				}
				return
			}
			data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:")
			if !ok {
				continue
			}
			now := time.Now()
			var ev sseEvent
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
				st.failed <- fmt.Errorf("event %.200q: %w", data, err)
				return
			}
			if ev.Type == "snapshot" {
				once.Do(func() { close(first) })
			}
			st.mu.Lock()
			for _, e := range ev.Entries {
				st.seen(e.Player, now)
			}
			for _, e := range ev.Changes {
				st.seen(e.Player, now)
			}
			st.mu.Unlock()
		}
	}()
	select {
	case <-first:
		return st, nil
	case err := <-st.failed:
		return nil, err
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("no snapshot on the stream of %s within 10 s", base)
	}
}

// seen delivers the first sighting of an awaited player; st.mu is held.
func (st *stream) seen(player string, at time.Time) {
	if ch, ok := st.waiting[player]; ok {
		ch <- at
		delete(st.waiting, player)
	}
}

// expect registers a player to wait for, before it is submitted.
func (st *stream) expect(player string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	st.mu.Lock()
	st.waiting[player] = ch
	st.mu.Unlock()
	return ch
}

func (st *stream) forget(player string) {
	st.mu.Lock()
	delete(st.waiting, player)
	st.mu.Unlock()
}

// lagPeriod is the range of the random pause between probes: --lag-every,
// or the nodes' poll or stream-coalescing period when longer.
func (h *harness) lagPeriod() time.Duration {
	coalesce := h.cfg.LagCoalesce
	if coalesce <= 0 {
		coalesce = 200 * time.Millisecond // podium's default
	}
	return max(h.cfg.LagEvery, h.cfg.PollEvery, coalesce)
}
