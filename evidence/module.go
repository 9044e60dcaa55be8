package evidence

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// The evidence module (issue 9 §4): uploads stored with their submission.
// The bytes go straight to the store (podium.EvidenceStore), which is the
// authority: nothing about evidence is held in memory, so every node sees
// the same. Expiry is absolute: unpublished evidence gets the board's TTL
// at upload; evidence of a published submission is promoted, which fixes
// its expiry once (the board's retention, or never) and nothing moves it
// again. A background loop deletes expired rows in bounded batches; reads
// hide them at once.
//
// The module registers with the engine (engine.Config.Modules). It reads
// boards and entries through Engine, which the engine satisfies, and
// review items through the moderation module (package review) registered
// with the same engine, found as a ReviewItems; the engine never imports
// this package. What it does on the write path, moving a held
// submission's evidence when the submission is approved, is the
// approval's batch (podium.EvidenceFollow), which review writes.

// Config configures the evidence module; zero values mean the defaults.
type Config struct {
	// SweepEvery is how often expired evidence is deleted (default 1m;
	// negative: never, tests call SweepEvidence), SweepBatch rows at a
	// time (default 200: a batch may free 200 MiB of content).
	SweepEvery time.Duration
	SweepBatch int
}

func (c *Config) fill() {
	if c.SweepEvery == 0 {
		c.SweepEvery = time.Minute
	}
	if c.SweepBatch <= 0 {
		c.SweepBatch = 200
	}
}

// Engine is what the module reads of the engine.
type Engine interface {
	Board(id string) (engine.BoardInfo, error)
	Entry(ctx context.Context, q engine.Query, player string) (engine.Page, error)
}

// ReviewItems is what the module reads of moderation: one review item.
type ReviewItems interface {
	ReviewItem(ctx context.Context, id string) (*podium.ReviewItem, error)
}

// Module stores and serves evidence. Register it with one engine
// (engine.Config.Modules) before using it.
type Module struct {
	cfg    Config
	host   engine.Host
	eng    Engine
	items  ReviewItems          // the review module's; noReview without one
	store  podium.EvidenceStore // nil: the store keeps no evidence
	shared bool                 // several nodes on one database
}

var (
	_ engine.Provisioner = (*Module)(nil)
	_ engine.Starter     = (*Module)(nil)
)

// New returns the evidence module with cfg.
func New(cfg Config) *Module {
	cfg.fill()
	return &Module{cfg: cfg}
}

// Name is "evidence".
func (m *Module) Name() string { return "evidence" }

// Provision takes the engine's store (its podium.EvidenceStore, if it has
// one), clock and reads.
func (m *Module) Provision(h engine.Host) {
	m.host, m.eng = h, h.Engine()
	m.items = noReview{}
	for _, x := range h.Engine().Modules() {
		if r, ok := x.(ReviewItems); ok {
			m.items = r
		}
	}
	m.store, _ = h.Store().(podium.EvidenceStore)
	_, m.shared = h.Store().(podium.SharedStore)
}

// noReview reads review items without a review module: there are none to
// read, as with a store that keeps no review queue.
type noReview struct{}

func (noReview) ReviewItem(context.Context, string) (*podium.ReviewItem, error) {
	return nil, podium.Errorf(podium.ECodeUnavailable, "this store keeps no review queue")
}

var errNoEvidence = podium.Errorf(podium.ECodeUnavailable, "this store keeps no evidence")

func (m *Module) evidenceStore() (podium.EvidenceStore, error) {
	if m.store == nil {
		return nil, errNoEvidence
	}
	return m.store, nil
}

// Start starts the sweeper, unless the store keeps no evidence or
// SweepEvery is negative.
func (m *Module) Start() {
	if m.store == nil || m.cfg.SweepEvery < 0 {
		return
	}
	m.host.Go(m.loop)
}

func (m *Module) loop(ctx context.Context) {
	t := time.NewTicker(m.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// A sweep under way when the engine stops finishes: Close
			// waits for it.
			if _, err := m.SweepEvidence(context.Background(), 10); err != nil {
				m.host.Logger().Warn("sweep expired evidence", "err", err)
			}
		}
	}
}

// SweepEvidence deletes expired evidence in batches of SweepBatch, at most
// max batches, and returns how many attachments went.
func (m *Module) SweepEvidence(ctx context.Context, max int) (int, error) {
	if m.store == nil {
		return 0, nil
	}
	total := 0
	for range max {
		n, err := m.store.SweepEvidence(ctx, m.host.Now(), m.cfg.SweepBatch)
		total += n
		if err != nil || n < m.cfg.SweepBatch {
			return total, err
		}
	}
	return total, nil
}
