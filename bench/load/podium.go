package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium/client"
)

// maxScore bounds the random scores; the values mean nothing, they only
// have to spread entries over the whole ranking.
const maxScore = 1_000_000_000

// podiumTarget drives one board of a running podium server over HTTP.
type podiumTarget struct {
	base  string // scheme://host[:port][/prefix], without a trailing slash
	key   string
	board string
	names []string
	// All workers share one transport; each worker has one request in
	// flight at a time, so each keeps one keep-alive connection busy.
	tr *http.Transport
	// api is podium's Go client over the same transport, for what is not
	// measured (creating the board, preloading it): it keeps the client
	// in use. The measured operations use the raw requests below, which
	// reuse their buffers and request objects and allocate nothing per
	// operation, so that the harness costs as little as possible.
	api *client.Client
}

// newPodium checks the URL and prepares a transport that keeps at least
// conns idle connections to the server, with write buffers that hold a
// whole batch request.
func newPodium(rawURL, key, board string, conns, batch int, names []string) (*podiumTarget, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want http://host:port", rawURL)
	}
	u.Path = trimSlash(u.Path)
	u.RawQuery, u.Fragment = "", ""
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          conns + 16,
		MaxIdleConnsPerHost:   conns + 16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		DisableCompression:    true,
		WriteBufferSize:       writeBufferSize(board, batch, names),
		ReadBufferSize:        32 << 10,
	}
	api := client.New(u.String(), client.WithKey(key), client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithUserAgent("podium-load/"+client.Version))
	return &podiumTarget{base: u.String(), key: key, board: board, names: names, tr: tr, api: api}, nil
}

// writeBufferSize returns a connection write buffer size that holds a
// whole batch request, up to 1 MiB. A body that does not fit is partly
// handed to the TCP connection's ReadFrom, which allocates a 32 KiB copy
// buffer on every request.
func writeBufferSize(board string, batch int, names []string) int {
	longest := 0
	for _, n := range names {
		longest = max(longest, len(n))
	}
	item := len(`{"board":"","player":"","keys":[]},`) + len(board) + longest + len("1000000000")
	return min(max(batch*item+4<<10, 16<<10), 1<<20)
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// close drops the idle connections.
func (p *podiumTarget) close() { p.tr.CloseIdleConnections() }

// bodySlot is a request body buffer that a worker refills for its next
// request once net/http is done with it.
//
// The body is an io.NopCloser around a *bytes.Reader because net/http
// recognises that as in-memory and writes headers and body with one
// system call; any other reader makes it flush the headers first, costing
// a second write per request. Since a NopCloser cannot report when the
// transport is done, the slot's request carries an httptrace hook that
// marks the body written.
type bodySlot struct {
	buf   []byte
	r     bytes.Reader
	rc    io.ReadCloser
	req   *http.Request // the worker's request, bound to this slot's trace
	wrote atomic.Bool   // set when net/http has written the whole request
}

// httpWorker is one client loop's state: a request reused from one
// operation to the next, the buffer its body is built in and the buffer
// the response is read into.
type httpWorker struct {
	tr   *http.Transport
	req  *http.Request // template; bodies go through slot.req
	slot *bodySlot
	in   bytes.Buffer // last response body
	rng  *rand.Rand
}

// newWorker prepares a worker for method on base+path; seed makes its
// random choices differ from the other workers'.
func (p *podiumTarget) newWorker(method, pathAndQuery string, seed uint64) *httpWorker {
	req, err := http.NewRequest(method, p.base+pathAndQuery, nil)
	if err != nil {
		panic(err) // the base URL was checked and paths are built from checked parts
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	w := &httpWorker{tr: p.tr, req: req, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	w.slot = w.newSlot()
	return w
}

func (w *httpWorker) newSlot() *bodySlot {
	s := &bodySlot{}
	s.rc = io.NopCloser(&s.r)
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { s.wrote.Store(true) }}
	s.req = w.req.WithContext(httptrace.WithClientTrace(context.Background(), trace))
	s.wrote.Store(true)
	return s
}

// buffer returns an empty slice to build the next request body in,
// reusing the previous one's memory when net/http is done with it.
func (w *httpWorker) buffer() []byte {
	if !w.slot.wrote.Load() {
		// Still being written (only after an early answer or a broken
		// connection): leave those bytes to the transport.
		w.slot = w.newSlot()
	}
	return w.slot.buf[:0]
}

// send performs the request with body (nil for none), reads the response
// body fully into w.in so the connection can be reused, and turns a non-2xx
// status into an answerError carrying the start of the body.
func (w *httpWorker) send(body []byte) error {
	req := w.req
	if body != nil {
		s := w.slot
		s.buf = body
		s.r.Reset(body)
		s.wrote.Store(false)
		s.req.Body = s.rc
		s.req.ContentLength = int64(len(body))
		req = s.req
	}
	resp, err := w.tr.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", w.req.Method, w.req.URL.Path, err)
	}
	w.in.Reset()
	_, err = w.in.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%s %s: reading the %d answer: %w", w.req.Method, w.req.URL.Path, resp.StatusCode, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &answerError{fmt.Sprintf("%s %s: %d %s", w.req.Method, w.req.URL.RequestURI(), resp.StatusCode, clip(w.in.Bytes(), 300))}
	}
	return nil
}

// clip returns at most n bytes of b as a string, marking a cut.
func clip(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// board is the board the harness creates: one descending key, best mode,
// not public (so every read goes through the key check, as a game
// server's would).
var board = client.BoardSpec{Title: "podium load harness", Keys: []client.RankKey{{Name: "score", Order: "desc"}},
	Mode: "best", Public: client.Bool(false)}

// setup creates or updates the board. A 409 here means the board exists
// with other keys or mode and holds entries: pick another --board.
func (p *podiumTarget) setup() error {
	if _, _, err := p.api.PutBoard(context.Background(), p.board, board); err != nil {
		return fmt.Errorf("create board: %w", err)
	}
	return nil
}

// appendItem appends one batch item for player with score to b.
func (p *podiumTarget) appendItem(b []byte, player string, score int64) []byte {
	b = append(b, `{"board":"`...)
	b = append(b, p.board...)
	b = append(b, `","player":"`...)
	b = append(b, player...)
	b = append(b, `","keys":[`...)
	b = strconv.AppendInt(b, score, 10)
	return append(b, "]}"...)
}

// itemErrorMark starts an item's error object in a batch answer. Results
// hold no error objects (the harness sends no meta), so every occurrence
// is a refused item.
var itemErrorMark = []byte(`{"error":`)

// itemErrors counts the refused items in a batch answer and, if there are
// any, returns an error quoting the first.
func itemErrors(req string, body []byte) (int, error) {
	n := bytes.Count(body, itemErrorMark)
	if n == 0 {
		return 0, nil
	}
	first := jsonObject(body[bytes.Index(body, itemErrorMark):])
	return n, &answerError{fmt.Sprintf("%s: %d items refused, the first: %s", req, n, clip(first, 300))}
}

// jsonObject returns the JSON object that b starts with (all of b when it
// is cut short).
func jsonObject(b []byte) []byte {
	depth, inString, escaped := 0, false, false
	for i, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return b[:i+1]
			}
		}
	}
	return b
}

// preload submits a score for every player, in batches of chunk from
// workers goroutines, so that read scenarios find every player ranked. It
// returns the board's total afterwards.
func (p *podiumTarget) preload(ctx context.Context, chunk, workers int) (total int64, err error) {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(1000+i), 0x9e3779b97f4a7c15))
			for ctx.Err() == nil {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= len(p.names) {
					return
				}
				hi := min(lo+chunk, len(p.names))
				scores := make([]client.Score, 0, hi-lo)
				for j := lo; j < hi; j++ {
					scores = append(scores, client.Score{Board: p.board, Player: p.names[j], Keys: []int64{rng.Int64N(maxScore)}})
				}
				res, err := p.api.SubmitBatch(ctx, scores)
				if err != nil {
					fail(err)
					return
				}
				for _, r := range res {
					if r.Error != nil {
						fail(fmt.Errorf("POST /v1/scores: item refused: %w", r.Error))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, fmt.Errorf("preload: %w", firstErr)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	page, err := p.api.Top(ctx, p.board, 0, 1, client.ReadOptions{})
	if err != nil {
		return 0, fmt.Errorf("preload check: %w", err)
	}
	return int64(page.Total), nil
}

// podiumOps returns n operations for scenario and a description of one
// operation.
func (p *podiumTarget) podiumOps(scenario string, n, batch int) ([]opFunc, string) {
	ops := make([]opFunc, n)
	var desc string
	for i := range ops {
		seed := uint64(i + 1)
		switch scenario {
		case "single":
			desc = "POST /v1/boards/{board}/scores"
			w := p.newWorker(http.MethodPost, "/v1/boards/"+p.board+"/scores", seed)
			ops[i] = func() (int, int, error) {
				b := append(w.buffer(), `{"player":"`...)
				b = append(b, p.names[w.rng.IntN(len(p.names))]...)
				b = append(b, `","score":`...)
				b = strconv.AppendInt(b, w.rng.Int64N(maxScore), 10)
				b = append(b, '}')
				if err := w.send(b); err != nil {
					return 0, 0, err
				}
				return 1, 0, nil
			}
		case "batch":
			desc = fmt.Sprintf("POST /v1/scores (%d items)", batch)
			w := p.newWorker(http.MethodPost, "/v1/scores", seed)
			ops[i] = func() (int, int, error) {
				b := append(w.buffer(), `{"scores":[`...)
				for j := range batch {
					if j > 0 {
						b = append(b, ',')
					}
					b = p.appendItem(b, p.names[w.rng.IntN(len(p.names))], w.rng.Int64N(maxScore))
				}
				b = append(b, "]}"...)
				if err := w.send(b); err != nil {
					return 0, 0, err
				}
				bad, err := itemErrors("POST /v1/scores", w.in.Bytes())
				return batch - bad, bad, err
			}
		case "top":
			desc = "GET /v1/boards/{board}/entries?limit=100"
			w := p.newWorker(http.MethodGet, "/v1/boards/"+p.board+"/entries?limit=100", seed)
			ops[i] = func() (int, int, error) {
				if err := w.send(nil); err != nil {
					return 0, 0, err
				}
				return 1, 0, nil
			}
		case "rank":
			desc = "GET /v1/boards/{board}/entries/{player}"
			w := p.newWorker(http.MethodGet, "/v1/boards/"+p.board+"/entries/", seed)
			prefix := w.req.URL.Path
			ops[i] = func() (int, int, error) {
				// The request is reused only after its response body was
				// closed, which is when net/http allows it.
				w.req.URL.Path = prefix + p.names[w.rng.IntN(len(p.names))]
				if err := w.send(nil); err != nil {
					return 0, 0, err
				}
				return 1, 0, nil
			}
		default:
			panic("unknown scenario " + scenario)
		}
	}
	return ops, desc
}
