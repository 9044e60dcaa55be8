package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// api is the harness's HTTP client for setting up boards and loads.
type api struct {
	key string
	hc  *http.Client
}

func newAPI(key string, conns int) *api {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &api{key: key, hc: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// statusError is an answer with a status other than 2xx.
type statusError struct {
	Status int
	Body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Body) }

// do sends one request and returns the answer's body; a non-2xx answer is
// a *statusError.
func (a *api) do(ctx context.Context, method, url string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		if len(b) > 300 {
			b = b[:300]
		}
		return nil, &statusError{res.StatusCode, string(bytes.TrimSpace(b))}
	}
	return b, nil
}

// Boards the harness makes: public (reads need no key, as with wrk's
// scripts), best mode.
const (
	boardOneKey = `{"keys":[{"name":"score","order":"desc"}],"mode":"best","public":true}`
	// boardTwoKeys is the shape of engine's BenchmarkStartup1M board.
	boardTwoKeys = `{"keys":[{"name":"time_ms","order":"asc"},{"name":"bbbv","order":"desc"}],"mode":"best","public":true}`
)

// putBoard creates or replaces a board.
func (a *api) putBoard(ctx context.Context, base, id, def string) error {
	_, err := a.do(ctx, http.MethodPut, base+"/v1/boards/"+id, []byte(def))
	if err != nil {
		return fmt.Errorf("create board %s on %s: %w", id, base, err)
	}
	return nil
}

// total returns the number of entries of a board as a node sees it.
func (a *api) total(ctx context.Context, base, board string) (int64, error) {
	b, err := a.do(ctx, http.MethodGet, base+"/v1/boards/"+board+"/entries?limit=1", nil)
	if err != nil {
		return 0, err
	}
	var page struct {
		Total int64 `json:"total"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return 0, err
	}
	return page.Total, nil
}

// waitTotal waits until every node in bases sees at least n entries on
// board: reads on every node are then meaningful.
func (a *api) waitTotal(ctx context.Context, bases []string, board string, n int64, within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, base := range bases {
		for {
			got, err := a.total(ctx, base, board)
			if err == nil && got >= n {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s sees %d of %d entries on %s after %s (err %v)", base, got, n, board, within, err)
			}
			if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill submits one score for each of players first..first+n-1 (named
// p<i>, as bench/wrk's scripts name them) in batches of chunk, workers
// requests at a time, spread over bases in turn. item formats one batch
// item's keys for player i.
func (a *api) fill(ctx context.Context, bases []string, board string, first, n, chunk, workers int, keys func(i int) string) error {
	type job struct{ lo, hi int }
	jobs := make(chan job)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var buf bytes.Buffer
			k := w
			for j := range jobs {
				buf.Reset()
				buf.WriteString(`{"scores":[`)
				for i := j.lo; i < j.hi; i++ {
					if i > j.lo {
						buf.WriteByte(',')
					}
					fmt.Fprintf(&buf, `{"board":%q,"player":"p%d","keys":[%s]}`, board, i, keys(i))
				}
				buf.WriteString("]}")
				base := bases[k%len(bases)]
				k++
				b, err := a.do(ctx, http.MethodPost, base+"/v1/scores", buf.Bytes())
				if err == nil && bytes.Contains(b, []byte(`"error"`)) {
					err = fmt.Errorf("an item was refused: %.300s", b)
				}
				if err != nil {
					errc <- fmt.Errorf("fill %s: %w", board, err)
					return
				}
			}
		}(w)
	}
	var err error
send:
	for lo := first; lo < first+n; lo += chunk {
		select {
		case jobs <- job{lo, min(lo+chunk, first+n)}:
		case err = <-errc:
			break send
		case <-ctx.Done():
			err = ctx.Err()
			break send
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// readyState is what /readyz says.
type readyState struct {
	Status string          `json:"status"`
	Checks json.RawMessage `json:"checks"`
}

// waitReady polls nd's /readyz every 5 ms until it answers 200 "ready" and
// returns how long that took from now. It fails if the process exits or
// within passes.
func waitReady(ctx context.Context, nd *node, within time.Duration) (time.Duration, error) {
	t0 := time.Now()
	hc := &http.Client{Timeout: time.Second}
	last := ""
	for {
		res, err := hc.Get(nd.url + "/readyz")
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var st readyState
			json.Unmarshal(b, &st)
			if res.StatusCode == http.StatusOK && st.Status == "ready" {
				return time.Since(t0), nil
			}
			last = strconv.Itoa(res.StatusCode) + " " + string(bytes.TrimSpace(b))
		} else {
			last = err.Error()
		}
		if nd.exited() {
			return 0, fmt.Errorf("node %s exited before it was ready (%v); its log ends:\n%s", nd.name, nd.err, nd.logTail())
		}
		if time.Since(t0) > within {
			return 0, fmt.Errorf("node %s not ready after %s: %s; its log ends:\n%s", nd.name, within, last, nd.logTail())
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
