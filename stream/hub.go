// Package stream fans board changes out to live subscribers: windows (the
// top N of a board) that coalesce changes into deltas, periodic and resync
// snapshots, resumable event ids, bounded per-connection queues and caps on
// connections. Transport (SSE, WebSocket) lives in package http; this
// package only produces encoded events and hands them to connections.
//
// The locks and their order are listed in docs/LOCKS.md.
package stream

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// View is the state a window shows: the top entries of a board's current
// period, as the Source reads it, with the board's definition read under
// the same lock as the entries, so that visibility, title and keys always
// go with the entries they describe.
type View struct {
	Board  string
	Title  string
	Keys   []podium.KeyDef
	Public bool
	// Generation is an opaque number that changes when the board is
	// deleted and made again (or reloaded): a new chain of events.
	Generation uint64
	Period     string
	NextReset  *time.Time
	Seq        uint64
	Total      int
	Entries    []Entry
	// Feed holds the events of an activity feed window, newest first
	// (feed.go); Seq then counts the window's deltas.
	Feed []FeedEvent
}

// Source reads the current top entries of a board. A missing board is
// podium.ECodeBoardNotFound.
type Source interface {
	View(ctx context.Context, board string, limit int) (View, error)
}

// Config tunes a Hub. Zero values mean the defaults.
type Config struct {
	Coalesce      time.Duration // window over which changes become one delta (200ms)
	SnapshotEvery time.Duration // safety-net full snapshot (30s)
	History       int           // deltas kept per window for resume (512)
	HistoryBytes  int64         // bytes of deltas kept per window for resume (256 KiB)
	Queue         int           // events queued per connection (256)
	QueueBytes    int64         // bytes a connection may hold, queued and being written (8 MiB; at most MemoryPerAddress)
	MaxPerIP      int           // concurrent streams per client address (32)
	MaxTotal      int           // concurrent streams in all (20000)
	MaxSubs       int           // subscriptions per connection (32)
	MaxLimit      int           // largest window (1000)
	// MemoryBudget bounds, in bytes, everything the hub keeps: histories,
	// snapshots, queued events and the windows' states (256 MiB). It is
	// never passed: histories and cached snapshots are dropped, new
	// windows refused, and connections that find no room resynced or
	// ended (see memory).
	MemoryBudget int64
	// MemoryPerAddress is one client address's share of MemoryBudget:
	// what is queued for its connections and the states of the windows it
	// opened (default MemoryBudget/8).
	MemoryPerAddress int64
	// OverloadChanges bounds what a window sends, in changed entries a
	// second (a snapshot counts its entries): past it, changes wait a
	// round or two and go out merged (default: 4 x limit, at least 200).
	OverloadChanges int
	// IdleWindow is how long a window nobody watches is kept (1m).
	IdleWindow time.Duration
	// Now is the hub's clock (default time.Now).
	Now func() time.Time
	// ManualTick starts no ticker: the caller runs each coalescing round
	// with Tick (tests drive the hub with a fake clock this way).
	ManualTick bool
	Logger     *slog.Logger
}

// Hub owns the windows and the connections.
type Hub struct {
	src Source
	cfg Config
	log *slog.Logger

	mu           sync.Mutex
	windows      map[windowKey]*window
	byBoard      map[string][]*window
	conns        map[*Conn]struct{}
	addrs        map[string]*address                   // client addresses with connections or bytes
	byKey        map[string]map[*Conn]struct{}         // open connections by API key id
	revoked      map[string]time.Time                  // ids of keys revoked in the last revokedKeep, when (auth.go)
	revokedOrder []revocation                          // the same, oldest first, to forget them
	watches      map[string]map[chan struct{}]struct{} // Watch (watch.go), by board
	closed       bool

	tickMu  sync.Mutex    // one coalescing round at a time
	snapSeq atomic.Uint64 // snapshot ids, unique across restarts
	stop    chan struct{}
	done    chan struct{}

	mem        memory
	subs       atomic.Int64 // subscriptions attached to windows
	eventsSent atomic.Uint64
	bytesSent  atomic.Uint64
	deferred   atomic.Uint64 // rounds a window held a change back for its rate
}

type windowKey struct {
	board string
	limit int
	feed  bool // an activity feed window (feed.go); board "" is every public board's
}

// New returns a running hub; Close stops it.
func New(src Source, cfg Config) *Hub {
	if cfg.Coalesce <= 0 {
		cfg.Coalesce = 200 * time.Millisecond
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = 30 * time.Second
	}
	if cfg.History <= 0 {
		cfg.History = 512
	}
	if cfg.HistoryBytes <= 0 {
		cfg.HistoryBytes = 256 << 10
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 8 << 20
	}
	if cfg.MaxSubs <= 0 {
		cfg.MaxSubs = 32
	}
	if cfg.MemoryBudget <= 0 {
		cfg.MemoryBudget = 256 << 20
	}
	if cfg.MemoryPerAddress <= 0 {
		cfg.MemoryPerAddress = cfg.MemoryBudget / 8
	}
	cfg.MemoryPerAddress = min(cfg.MemoryPerAddress, cfg.MemoryBudget)
	cfg.QueueBytes = min(cfg.QueueBytes, cfg.MemoryPerAddress)
	if cfg.MaxPerIP <= 0 {
		cfg.MaxPerIP = 32
	}
	if cfg.MaxTotal <= 0 {
		cfg.MaxTotal = 20000
	}
	if cfg.MaxLimit <= 0 {
		cfg.MaxLimit = 1000
	}
	if cfg.IdleWindow <= 0 {
		cfg.IdleWindow = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Hub{src: src, cfg: cfg, log: cfg.Logger,
		windows: map[windowKey]*window{}, byBoard: map[string][]*window{},
		conns: map[*Conn]struct{}{}, addrs: map[string]*address{}, byKey: map[string]map[*Conn]struct{}{}, revoked: map[string]time.Time{},
		stop: make(chan struct{}), done: make(chan struct{})}
	h.mem.budget = cfg.MemoryBudget
	h.mem.perAddr = cfg.MemoryPerAddress
	h.snapSeq.Store(snapshotBase())
	go h.run()
	return h
}

// snapshotBase is where a hub's snapshot ids start: a random 21-bit prefix
// above a 32-bit counter. An id a client kept from another node, or from
// before a restart, then names another chain (a resume that cannot be
// served gets a snapshot) except by a 1 in 2 million chance; and every id
// stays below 2^53, which JavaScript numbers hold exactly. (Ids from the
// clock collided between nodes: a node a second older reached the next
// one's range after a million snapshots.)
func snapshotBase() uint64 {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	prefix := uint64(binary.BigEndian.Uint32(b[:]))&(1<<21-1) | 1 // never 0
	return prefix << 32
}

func (h *Hub) newSnapshotID() uint64 { return h.snapSeq.Add(1) }

// Config returns the effective configuration.
func (h *Hub) Config() Config { return h.cfg }

// Applied marks the windows of a board for a flush at the next tick. It is
// called by the engine's writer and never blocks on subscribers.
func (h *Hub) Applied(board, period string, seq uint64, players []uint32) {
	// The list is walked under the lock: drop and window change it.
	h.mu.Lock()
	for _, w := range h.byBoard[board] {
		w.dirty.Store(true)
	}
	for _, w := range h.byBoard[""] { // the all-boards feed (feed.go)
		w.dirty.Store(true)
	}
	h.notifyLocked(board)
	h.mu.Unlock()
}

// Connect registers a connection from the client address ip (the caller
// applies the trusted-proxy rule and any grouping, such as an IPv6 /64)
// opened by key (nil: anonymous), the principal its subscriptions are
// authorised for. It is ECodeRateLimited when the per-address or overall
// cap is reached,
// ECodeUnauthenticated when the key was revoked, and ECodeUnavailable
// when shutting down.
func (h *Hub) Connect(ip string, key *podium.APIKey) (*Conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, podium.Errorf(podium.ECodeUnavailable, "the server is shutting down")
	}
	if key != nil {
		if _, gone := h.revoked[key.ID]; gone {
			return nil, errRevoked
		}
	}
	a := h.addrs[ip]
	if a != nil && a.conns >= h.cfg.MaxPerIP {
		return nil, podium.Errorf(podium.ECodeRateLimited, "too many streams from this address (at most %d)", h.cfg.MaxPerIP)
	}
	if len(h.conns) >= h.cfg.MaxTotal {
		return nil, podium.Errorf(podium.ECodeRateLimited, "the server is at its stream limit (%d)", h.cfg.MaxTotal)
	}
	if a == nil {
		a = &address{key: ip}
		h.addrs[ip] = a
	}
	c := newConn(h, a, key)
	h.conns[c] = struct{}{}
	a.conns++
	if key != nil {
		if h.byKey[key.ID] == nil {
			h.byKey[key.ID] = map[*Conn]struct{}{}
		}
		h.byKey[key.ID][c] = struct{}{}
	}
	return c, nil
}

// forgetAddrLocked forgets an address that holds nothing any more. The
// caller holds h.mu.
func (h *Hub) forgetAddrLocked(a *address) {
	if a.conns == 0 && a.bytes.Load() == 0 && h.addrs[a.key] == a {
		delete(h.addrs, a.key)
	}
}

func (h *Hub) disconnect(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[c]; !ok {
		return
	}
	delete(h.conns, c)
	c.addr.conns--
	h.forgetAddrLocked(c.addr)
	if c.key != nil {
		if delete(h.byKey[c.key.ID], c); len(h.byKey[c.key.ID]) == 0 {
			delete(h.byKey, c.key.ID)
		}
	}
}

// Close ends every connection (they tell clients to come back soon) and
// stops the hub.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	conns := make([]*Conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.end(nil)
	}
	close(h.stop)
	<-h.done
}
