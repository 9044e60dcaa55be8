package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// target is the board on the running server, reached over plain HTTP.
type target struct {
	base  string // scheme://host[:port][/prefix]
	key   string
	board string
	hc    *http.Client
}

func newTarget(u *url.URL, key, board string, conns int) *target {
	tr := &http.Transport{MaxIdleConnsPerHost: conns + 4, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
	return &target{base: u.String(), key: key, board: board, hc: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// call sends one request and decodes a 2xx JSON answer into out (when not
// nil). Any other status is an error quoting the answer.
func (t *target) call(ctx context.Context, method, path string, body []byte, out any) (status int, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		b = bytes.TrimSpace(b)
		if len(b) > 300 {
			b = append(b[:300], "..."...)
		}
		return resp.StatusCode, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// page is the answer of GET /v1/boards/{board}/entries.
type page struct {
	Seq     uint64  `json:"seq"`
	Total   int     `json:"total"`
	Entries []entry `json:"entries"`
}

// top reads the board's first limit entries.
func (t *target) top(ctx context.Context, limit int) (*page, error) {
	var p page
	_, err := t.call(ctx, http.MethodGet, "/v1/boards/"+t.board+"/entries?limit="+strconv.Itoa(limit), nil, &p)
	return &p, err
}

// setup creates the public board. It refuses a board that already holds
// entries, so that a run never mixes with earlier data.
func (t *target) setup(ctx context.Context, mode string) error {
	p, err := t.top(ctx, 1)
	switch {
	case err == nil && p.Total > 0:
		return fmt.Errorf("board %s already holds %d entries: delete it (DELETE /v1/boards/%s) or pick another --board", t.board, p.Total, t.board)
	case err != nil && !strings.Contains(err.Error(), "404"):
		return err
	}
	body := `{"title":"podium fan-out harness","keys":[{"name":"score","order":"desc"}],"mode":"` + mode + `","public":true}`
	_, err = t.call(ctx, http.MethodPut, "/v1/boards/"+t.board, []byte(body), nil)
	return err
}

// preload gives every player of m its score, in batches.
func (t *target) preload(ctx context.Context, m *model) error {
	const chunk = 5000
	for lo := 0; lo < len(m.names); lo += chunk {
		var b bytes.Buffer
		b.WriteString(`{"scores":[`)
		for i := lo; i < min(lo+chunk, len(m.names)); i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"board":%q,"player":%q,"keys":[%d]}`, t.board, m.names[i], m.scores[i])
		}
		b.WriteString("]}")
		var ans struct {
			Results []json.RawMessage `json:"results"`
		}
		if _, err := t.call(ctx, http.MethodPost, "/v1/scores", b.Bytes(), &ans); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		for _, r := range ans.Results {
			if bytes.HasPrefix(r, []byte(`{"error"`)) {
				return fmt.Errorf("preload: an item was refused: %s", r)
			}
		}
	}
	return nil
}

// deleteBoard removes the board and its entries.
func (t *target) deleteBoard(ctx context.Context) error {
	_, err := t.call(ctx, http.MethodDelete, "/v1/boards/"+t.board, nil, nil)
	return err
}

// model is the driver's idea of the board, used to aim submissions: most
// go to players far below the top who improve a little and stay there;
// a topShare of them put a player into the top limit or move one within it.
type model struct {
	names    []string
	scores   []int64
	order    []int // players by score, best first
	dirty    bool  // order needs sorting
	limit    int
	topShare float64
	latest   bool // the board replaces entries (mode latest) instead of keeping the best
	// smallMoves makes top changes small (enter near the bottom, climb a
	// few places) instead of landing anywhere in the window.
	smallMoves bool
	rng        *rand.Rand
}

func newModel(players, limit int, topShare float64, latest bool, seed uint64) *model {
	m := &model{names: make([]string, players), scores: make([]int64, players), order: make([]int, players),
		limit: limit, topShare: topShare, latest: latest, rng: rand.New(rand.NewPCG(seed, 0x5eed)), dirty: true}
	for i := range players {
		m.names[i] = fmt.Sprintf("fan-%06d", i)
		m.scores[i] = m.rng.Int64N(1_000_000_000)
		m.order[i] = i
	}
	return m
}

func (m *model) sort() {
	if m.dirty {
		slices.SortFunc(m.order, func(a, b int) int {
			if m.scores[a] != m.scores[b] {
				if m.scores[a] > m.scores[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		m.dirty = false
	}
}

// next picks the next submission: a player, its new score, and whether it
// was aimed at the top limit.
func (m *model) next() (player int, score int64, top bool) {
	m.sort()
	n := len(m.order)
	far := max(4*m.limit, 200)
	if far < n && m.rng.Float64() >= m.topShare {
		// Far below the top: a small improvement that stays below rank
		// 2*limit, so the window does not change.
		p := m.order[far+m.rng.IntN(n-far)]
		ceiling := m.scores[m.order[2*m.limit]]
		old := m.scores[p]
		s := min(old+1+m.rng.Int64N(max(1, (ceiling-old)/20)), ceiling-1)
		if s > old {
			m.scores[p] = s // no re-sort needed: it stays in the far region
		}
		return p, s, false
	}
	last := min(m.limit, n) - 1
	if m.smallMoves {
		return m.smallMove(last)
	}
	best, floor := m.scores[m.order[0]], m.scores[m.order[last]]
	hi := best + max(1, (best-floor)/10) // now and then a new leader
	var p int
	lo := floor
	if n > m.limit && m.rng.IntN(2) == 0 {
		p = m.order[m.limit+m.rng.IntN(n-m.limit)] // enters the top
	} else {
		p = m.order[m.rng.IntN(last+1)] // moves within the top (down only in latest mode)
		if !m.latest {
			lo = max(lo, m.scores[p])
		}
	}
	s := lo + 1 + m.rng.Int64N(hi-lo)
	if m.latest || s > m.scores[p] {
		m.scores[p] = s
	}
	m.dirty = true
	return p, s, true
}

// smallMove is a top change as long-tailed score distributions make them:
// half the time a player enters near the bottom of the window (a few ranks
// above its last place), half the time one already in it climbs 1 to 3
// places. Either shifts only the few entries it passes.
func (m *model) smallMove(last int) (player int, score int64, top bool) {
	n := len(m.order)
	var p, target int
	if n > m.limit && m.rng.IntN(2) == 0 {
		p = m.order[m.limit+m.rng.IntN(n-m.limit)]
		target = max(0, last-m.rng.IntN(4))
	} else {
		k := m.rng.IntN(last + 1)
		p = m.order[k]
		target = max(0, k-1-m.rng.IntN(3))
	}
	// A score between the entries at target and target-1 (above the
	// leader for target 0) puts p at rank target.
	lo := m.scores[m.order[target]]
	hi := lo + 1_000_000
	if target > 0 {
		hi = m.scores[m.order[target-1]]
	}
	s := lo + 1
	if hi-lo > 2 {
		s = lo + 1 + m.rng.Int64N(hi-lo-1)
	}
	if m.latest || s > m.scores[p] {
		m.scores[p] = s
	}
	m.dirty = true
	return p, s, true
}

// submission is one score the driver sent: its seq, when it was sent and
// when its answer arrived (the server answers after the durable commit),
// relative to fleet.start.
type submission struct {
	seq          uint64
	sent, commit time.Duration
	affects      bool // it changed the top limit (by the answer's ranks)
	top          bool // it was aimed at the top limit
}

// driveResult is what the driver did.
type driveResult struct {
	subs    []submission
	errors  int
	samples []string
	elapsed time.Duration
}

// drive submits scores at rate per second for dur from workers
// goroutines and records every answer.
func drive(ctx context.Context, t *target, m *model, f *fleet, limit int, rate float64, dur time.Duration, workers int) *driveResult {
	type job struct {
		body []byte
		top  bool
	}
	jobs := make(chan job, 1024)
	res := &driveResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	path := "/v1/boards/" + t.board + "/scores"
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				var ans struct {
					Seq      uint64 `json:"seq"`
					Improved bool   `json:"improved"`
					Entry    *struct {
						Rank int `json:"rank"`
					} `json:"entry"`
					Previous *struct {
						Rank int `json:"rank"`
					} `json:"previous"`
				}
				sent := time.Since(f.start)
				_, err := t.call(ctx, http.MethodPost, path, j.body, &ans)
				commit := time.Since(f.start)
				mu.Lock()
				if err != nil {
					res.errors++
					if len(res.samples) < 5 {
						res.samples = append(res.samples, err.Error())
					}
				} else {
					affects := ans.Improved && (ans.Entry != nil && ans.Entry.Rank <= limit ||
						ans.Previous != nil && ans.Previous.Rank <= limit)
					res.subs = append(res.subs, submission{seq: ans.Seq, sent: sent, commit: commit, affects: affects, top: j.top})
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := 0; ; i++ {
		due := time.Duration(i) * interval
		if due >= dur {
			break
		}
		if d := time.Until(start.Add(due)); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		if ctx.Err() != nil {
			break
		}
		p, s, top := m.next()
		body := fmt.Appendf(nil, `{"player":%q,"score":%d}`, m.names[p], s)
		jobs <- job{body, top}
	}
	close(jobs)
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.SortFunc(res.subs, func(a, b submission) int { return cmp.Compare(a.seq, b.seq) })
	return res
}
