package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Counters each client keeps. They only grow; the report takes the
// difference between two samples.
const (
	cWire       = iota // bytes read from the socket (HTTP headers, chunk framing, SSE)
	cSSE               // bytes of the SSE stream itself (the de-chunked body)
	cSnapshots         // snapshot events
	cDeltas            // delta events
	cPeriods           // period events
	cErrors            // error events
	cOther             // events of any other type
	cComments          // comment lines (": ping")
	cSnapBytes         // SSE bytes of snapshot events
	cDeltaBytes        // SSE bytes of delta events
	cEquiv             // what every snapshot and delta would have cost as a full snapshot
	cGaps              // deltas that did not follow the state held
	cBadDeltas         // deltas that followed but could not be applied
	cResyncs           // reconnects without a last event id to get a fresh snapshot
	cDrops             // connections that ended without being asked to (reconnected with Last-Event-ID)
	cConnFails         // connection attempts that failed (dial, status other than 200)
	cNewChains         // snapshots that replaced a live chain (periodic or server-side resync)
	cIgnored           // deltas ignored while a snapshot was awaited
	cModelMiss         // snapshots whose size the harness's model got wrong
	cSeqBack           // events whose seq went backwards (delta seq <= prev_seq, or a snapshot older than the state held)
	nCounters
)

var counterNames = [nCounters]string{"wire_bytes", "sse_bytes", "snapshots", "deltas", "periods", "error_events",
	"other_events", "comments", "snapshot_bytes", "delta_bytes", "as_snapshots_bytes", "gaps", "bad_deltas",
	"resyncs", "drops", "conn_failures", "new_chains", "ignored_deltas", "size_model_misses", "seq_regressions"}

// counters is a set of counters; the zero value is ready.
type counters [nCounters]atomic.Int64

// sample returns the current values.
func (c *counters) sample() (s [nCounters]int64) {
	for i := range c {
		s[i] = c[i].Load()
	}
	return s
}

// evRec is one event a client applied: its seq and when it was read,
// relative to fleet.start.
type evRec struct {
	seq uint64
	at  time.Duration
}

// fleet is what all clients share.
type fleet struct {
	addr      string // host:port to dial
	host      string // Host header
	path      string // request path and query of the stream
	start     time.Time
	measuring atomic.Bool // record events for latency only while true
	dialer    net.Dialer
	sizes     sync.Map // eventKey -> int: snapshot size after that event
	parsed    sync.Map // event id -> *parsedEvent: each event is decoded once for the fleet

	mu      sync.Mutex
	samples []string // distinct error samples, the first few

	h2cConns atomic.Int64 // --h2c: connections dialed
}

type eventKey struct{ snap, seq uint64 }

// parsedEvent is an event's data and its decoding, shared read-only by
// every client that received the same bytes.
type parsedEvent struct {
	data []byte
	m    eventMsg
}

// decode returns the decoding of a snapshot or delta's data. Every client
// of the window gets the same bytes under the same id, so it is decoded
// once and shared (read-only); a client whose bytes differ from the first
// decoding's decodes its own. Decoding each event for every client took
// more CPU than the server spends at 10,000 clients, and the harness
// shares the machine with the server.
func (f *fleet) decode(id string, data []byte) (*eventMsg, error) {
	if v, ok := f.parsed.Load(id); ok {
		if p := v.(*parsedEvent); bytes.Equal(p.data, data) {
			return &p.m, nil
		}
	}
	p := &parsedEvent{data: bytes.Clone(data)}
	if err := json.Unmarshal(data, &p.m); err != nil {
		return nil, err
	}
	if v, loaded := f.parsed.LoadOrStore(id, p); loaded && bytes.Equal(v.(*parsedEvent).data, data) {
		return &v.(*parsedEvent).m, nil
	}
	return &p.m, nil
}

// note keeps the first few distinct error messages.
func (f *fleet) note(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.samples {
		if s == msg {
			return
		}
	}
	if len(f.samples) < 8 {
		f.samples = append(f.samples, msg)
	}
}

// client is one SSE subscriber.
type client struct {
	f      *fleet
	dialer net.Dialer // f.dialer, with this client's source address (--addrs)
	ctr    counters

	ready     chan struct{} // closed at the first snapshot, or when giving up
	readyOnce sync.Once
	gaveUp    atomic.Bool

	mu     sync.Mutex // guards win and conn against the main goroutine
	win    window
	conn   net.Conn
	lastID string
	h2c    *h2cGroup // --h2c: the Transport its streams share (h2c.go); nil: HTTP/1.1

	log  []evRec // appended by the client goroutine; read after it ended
	seen uint64  // the highest seq applied
}

func newClient(f *fleet) *client { return &client{f: f, dialer: f.dialer, ready: make(chan struct{})} }

func (c *client) markReady() { c.readyOnce.Do(func() { close(c.ready) }) }

// Errors that end a session.
var (
	errResync = errors.New("resync")      // take a fresh snapshot on a new connection
	errFatal  = errors.New("board error") // an error event that stops a client
)

// run keeps the client subscribed until ctx ends. A connection that was
// never established is retried a few times before the client gives up.
func (c *client) run(ctx context.Context) {
	attempt := 0
	resume := ""
	for ctx.Err() == nil {
		err := c.session(ctx, resume)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errResync):
			c.ctr[cResyncs].Add(1)
			resume = ""
			continue
		case errors.Is(err, errFatal):
			c.f.note(err.Error())
			c.gaveUp.Store(true)
			c.markReady()
			return
		}
		c.f.note(err.Error())
		c.mu.Lock()
		live, last := c.win.live, c.lastID
		c.mu.Unlock()
		if live {
			c.ctr[cDrops].Add(1)
			resume, attempt = last, 0
		} else if attempt++; attempt > 5 {
			c.gaveUp.Store(true)
			c.markReady()
			return
		}
		wait := time.Duration(rand.Int64N(int64(100*time.Millisecond) << min(attempt, 6)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// stop closes the client's connection (after ctx was cancelled).
func (c *client) stop() {
	c.mu.Lock()
	if c.conn != nil {
		c.conn.Close()
	}
	c.mu.Unlock()
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (r countReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// session makes one connection and reads events until it ends.
func (c *client) session(ctx context.Context, resume string) error {
	if c.h2c != nil {
		return c.sessionH2C(ctx, resume)
	}
	conn, err := c.dialer.DialContext(ctx, "tcp", c.f.addr)
	if err != nil {
		c.ctr[cConnFails].Add(1)
		return fmt.Errorf("dial: %w", err)
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	defer conn.Close()
	if ctx.Err() != nil { // stop() ran before c.conn was set
		return ctx.Err()
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\nUser-Agent: podium-fanout\r\n", c.f.path, c.f.host)
	if resume != "" {
		fmt.Fprintf(&req, "Last-Event-ID: %s\r\n", resume)
	}
	req.WriteString("\r\n")
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(req.Bytes()); err != nil {
		c.ctr[cConnFails].Add(1)
		return fmt.Errorf("send request: %w", err)
	}
	br := bufio.NewReaderSize(countReader{conn, &c.ctr[cWire]}, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.ctr[cConnFails].Add(1)
		return fmt.Errorf("read response head: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		c.ctr[cConnFails].Add(1)
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("GET %s: %s %s", c.f.path, resp.Status, bytes.TrimSpace(body))
	}
	body := bufio.NewReaderSize(countReader{resp.Body, &c.ctr[cSSE]}, 4096)
	return c.read(body, conn)
}

// read parses the SSE stream and dispatches its events.
func (c *client) read(r *bufio.Reader, conn interface{ SetDeadline(time.Time) error }) error {
	var (
		line, data    []byte
		typ, id       string
		frame         int // bytes of the event so far
		hasData       bool
		deadlineRenew time.Time
		scratch       []byte
	)
	for {
		if now := time.Now(); now.After(deadlineRenew) {
			conn.SetDeadline(now.Add(60 * time.Second)) // the server pings every 15 s
			deadlineRenew = now.Add(10 * time.Second)
		}
		var err error
		line, scratch, err = readLine(r, scratch)
		if err != nil {
			return fmt.Errorf("read stream: %w", err)
		}
		n := len(line) + 1
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			if hasData {
				if err := c.dispatch(typ, id, data, frame+n); err != nil {
					return err
				}
			}
			typ, id, data, frame, hasData = "", "", data[:0], 0, false
			continue
		}
		if line[0] == ':' {
			c.ctr[cComments].Add(1)
			continue
		}
		frame += n
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			typ = string(value)
		case "id":
			id = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "retry":
			frame -= n // a reconnection hint, not part of any event
		}
	}
}

// readLine returns the next line without its "\n"; the result is valid
// until the next call. scratch holds lines longer than r's buffer.
func readLine(r *bufio.Reader, scratch []byte) (line, scratchOut []byte, err error) {
	line, err = r.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], scratch, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, scratch, err
	}
	scratch = append(scratch[:0], line...)
	for {
		line, err = r.ReadSlice('\n')
		scratch = append(scratch, line...)
		if err == nil {
			return scratch[:len(scratch)-1], scratch, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, scratch, err
		}
	}
}

// dispatch applies one event whose SSE frame was size bytes.
func (c *client) dispatch(typ, id string, data []byte, size int) error {
	at := time.Since(c.f.start)
	if typ == "" {
		typ = "message"
	}
	var m eventMsg // read-only: it may be shared with other clients
	switch typ {
	case "snapshot", "delta":
		pm, err := c.f.decode(id, data)
		if err != nil {
			c.ctr[cOther].Add(1)
			return fmt.Errorf("%s event %s: %w", typ, id, err)
		}
		m = *pm
	case "error":
		if err := json.Unmarshal(data, &m); err != nil {
			c.ctr[cOther].Add(1)
			return fmt.Errorf("%s event %s: %w", typ, id, err)
		}
	}
	switch typ {
	case "snapshot":
		c.ctr[cSnapshots].Add(1)
		c.ctr[cSnapBytes].Add(int64(size))
		c.ctr[cEquiv].Add(int64(size))
		c.mu.Lock()
		if c.win.live && c.win.snapID != m.SnapshotID {
			c.ctr[cNewChains].Add(1)
		}
		if c.win.live && m.Period == c.win.period && m.Seq < c.win.seq {
			c.ctr[cSeqBack].Add(1)
			c.f.note(fmt.Sprintf("snapshot %s has seq %d, older than the state held (%d)", id, m.Seq, c.win.seq))
		}
		c.win.applySnapshot(&m)
		c.lastID = id
		model := c.win.snapshotFrameSize()
		c.mu.Unlock()
		if model != size {
			c.ctr[cModelMiss].Add(1)
		}
		c.record(m.Seq, at)
		c.markReady()
	case "delta":
		c.ctr[cDeltas].Add(1)
		if m.Seq <= m.PrevSeq {
			c.ctr[cSeqBack].Add(1)
			c.f.note(fmt.Sprintf("delta %s: seq %d after prev_seq %d", id, m.Seq, m.PrevSeq))
		}
		c.ctr[cDeltaBytes].Add(int64(size))
		c.mu.Lock()
		if !c.win.live {
			c.mu.Unlock()
			c.ctr[cIgnored].Add(1)
			return nil
		}
		if err := c.win.applyDelta(&m); err != nil {
			c.win.live = false
			c.mu.Unlock()
			if errors.Is(err, errGap) {
				c.ctr[cGaps].Add(1)
			} else {
				c.ctr[cBadDeltas].Add(1)
				c.f.note(fmt.Sprintf("delta %s: %v", id, err))
			}
			return errResync
		}
		c.lastID = id
		k := eventKey{c.win.snapID, c.win.seq}
		equiv, ok := c.f.sizes.Load(k)
		if !ok {
			equiv, _ = c.f.sizes.LoadOrStore(k, c.win.snapshotFrameSize())
		}
		c.mu.Unlock()
		c.ctr[cEquiv].Add(int64(equiv.(int)))
		c.record(m.Seq, at)
	case "period":
		c.ctr[cPeriods].Add(1)
		c.mu.Lock()
		c.win.live = false // deltas wait for the snapshot that follows
		c.mu.Unlock()
	case "error":
		c.ctr[cErrors].Add(1)
		switch m.Code {
		case "board_not_found", "unauthenticated", "forbidden", "invalid_argument":
			return fmt.Errorf("%w: error event %s: %s", errFatal, m.Code, m.Message)
		}
		return fmt.Errorf("error event %s: %s", m.Code, m.Message)
	default:
		c.ctr[cOther].Add(1)
		c.f.note("unexpected event type " + strings.TrimSpace(typ))
	}
	return nil
}

// record logs an applied event for the latency figures, if it brought
// changes the client had not seen: a periodic snapshot restates a seq
// the client already has, and the time since that commit says nothing
// about delivery.
func (c *client) record(seq uint64, at time.Duration) {
	if seq <= c.seen {
		return
	}
	c.seen = seq
	if c.f.measuring.Load() {
		c.log = append(c.log, evRec{seq, at})
	}
}
