// Package retention deletes the periods that boards no longer keep
// (keep_periods, podium.Board.KeptFrom) from the database, in bounded
// batches, off the write path. The engine already answers those periods
// as empty and drops them from memory on every node by the clock
// (engine/retention.go); this module only reclaims their rows. See
// docs/ARCHITECTURE.md, "Period retention".
package retention

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Defaults of Config.
const (
	DefaultEvery      = time.Minute
	DefaultBatch      = 1000
	DefaultMaxBatches = 100
	DefaultAgain      = time.Second
)

// leaseName is the sweep's lease; leaseTTL how long one sweep's lease
// lasts (a sweep of MaxBatches batches takes about a second).
const (
	leaseName = "retention"
	leaseTTL  = 30 * time.Second
)

// Config configures the sweep; a zero field takes its default.
type Config struct {
	// Every is the time between two sweeps; negative: no sweeps in the
	// background (tests and tools call Sweep).
	Every time.Duration
	// Batch is the most rows (entries and log rows together) one
	// transaction deletes.
	Batch int
	// MaxBatches is the most transactions one sweep runs; a sweep that
	// ends on it sweeps again after Again rather than Every.
	MaxBatches int
	// Again is the pause before the next sweep when one stopped at
	// MaxBatches with rows left.
	Again time.Duration
}

func (c Config) withDefaults() Config {
	if c.Every == 0 {
		c.Every = DefaultEvery
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.MaxBatches <= 0 {
		c.MaxBatches = DefaultMaxBatches
	}
	if c.Again <= 0 {
		c.Again = DefaultAgain
	}
	return c
}

// leaser takes the cluster-wide lease (podium.TourneyStore's).
type leaser interface {
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (podium.Lease, bool, error)
	ReleaseLease(ctx context.Context, name, holder string, epoch int64) error
}

// boards is what the module reads of the engine.
type boards interface {
	Boards(publicOnly bool) []engine.BoardInfo
}

// Module is the retention sweep, an engine module.
type Module struct {
	cfg    Config
	host   engine.Host
	log    *slog.Logger
	store  podium.RetentionStore // nil: the store keeps no such rows
	lease  leaser                // nil: one node, no lease
	holder string
	boards boards

	// mu makes sweeps one at a time (the loop's and a caller's).
	mu sync.Mutex
	// after is the board a sweep stopped at MaxBatches on: the next
	// sweep starts after it, so one board with millions of rows does not
	// starve the others.
	after string

	deleted prometheus.Counter
	sweeps  prometheus.Counter
}

var (
	_ engine.Provisioner = (*Module)(nil)
	_ engine.Starter     = (*Module)(nil)
)

// New returns the module configured by c.
func New(c Config) *Module {
	return &Module{cfg: c.withDefaults(),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podium_retention_deleted_rows_total",
			Help: "Entries and log rows of periods past their board's keep_periods that this node deleted.",
		}),
		sweeps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podium_retention_sweeps_total",
			Help: "Retention sweeps this node ran (holding the lease).",
		}),
	}
}

// Name implements engine.Module.
func (m *Module) Name() string { return "retention" }

// Provision takes the store's retention rows and lease, if it has them.
func (m *Module) Provision(h engine.Host) {
	m.host, m.log, m.boards = h, h.Logger(), h.Engine()
	m.holder = "retention/" + h.Node()
	rs, ok := h.Store().(podium.RetentionStore)
	if !ok {
		return
	}
	m.store = rs
	if l, ok := h.Store().(leaser); ok {
		m.lease = l
	}
	if reg := h.Registerer(); reg != nil {
		reg.MustRegister(m.deleted, m.sweeps)
	}
}

// Start runs the sweep in the background.
func (m *Module) Start() {
	if m.store == nil || m.cfg.Every < 0 {
		return
	}
	m.host.Go(m.run)
}

func (m *Module) run(ctx context.Context) {
	var epoch int64
	defer func() {
		if m.lease != nil && epoch != 0 {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = m.lease.ReleaseLease(c, leaseName, m.holder, epoch)
		}
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next := m.cfg.Every
		r, err := m.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			m.log.Warn("retention: sweep", "err", err)
		}
		if r.Held {
			epoch = r.epoch
		}
		if r.More {
			next = m.cfg.Again
		}
		t.Reset(next)
	}
}

// Result is what one sweep did.
type Result struct {
	Held    bool // this node held the lease (or needs none) and swept
	Rows    int  // rows deleted
	Batches int  // transactions that deleted rows (MaxBatches bounds them)
	More    bool // it stopped at MaxBatches with rows left
	epoch   int64
}

// Sweep runs one sweep, if this node takes the lease: for each board
// that keeps a number of periods, batches of at most Batch rows of its
// periods before KeptFrom, until none are left or MaxBatches batches ran.
// A board with nothing to delete costs one transaction that deletes
// nothing (two index probes), not counted against MaxBatches. A sweep
// stopped by a restart, an error or MaxBatches is resumed by the next from
// what is left in the database; all it remembers is where to start the
// next one (after the board it stopped on).
func (m *Module) Sweep(ctx context.Context) (Result, error) {
	var r Result
	if m.store == nil {
		return r, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.host.Now()
	if m.lease != nil {
		l, ok, err := m.lease.AcquireLease(ctx, leaseName, m.holder, now, leaseTTL)
		if err != nil || !ok {
			return r, err
		}
		r.epoch = l.Epoch
	}
	r.Held = true
	m.sweeps.Inc()
	list := m.boards.Boards(false) // sorted by id
	start := sort.Search(len(list), func(i int) bool { return list[i].ID > m.after })
	m.after = ""
	for i := range list {
		bi := &list[(start+i)%len(list)]
		before := bi.KeptFrom(now)
		if before == "" {
			continue
		}
		for {
			if r.Batches == m.cfg.MaxBatches {
				r.More, m.after = true, bi.ID
				return r, nil
			}
			if err := ctx.Err(); err != nil {
				return r, err
			}
			n, err := m.store.PrunePeriods(ctx, bi.ID, before, m.cfg.Batch)
			r.Rows += n
			m.deleted.Add(float64(n))
			if err != nil {
				return r, err
			}
			if n == 0 {
				break
			}
			r.Batches++
			if n < m.cfg.Batch {
				break
			}
		}
	}
	return r, nil
}
