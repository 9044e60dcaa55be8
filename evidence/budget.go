package evidence

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/podiumhq/podium/ratelimit"
)

// Budgets bound what uploads may cost (seed 002 §7.1): how many run at
// once, per player and in total, and how many bytes arrive per minute, per
// player and in total. Every byte received counts, whether the upload is
// then stored, refused or fails half-way, and only those: bytes are
// charged a step ahead of reading and what was not read is given back
// (Meter), and a refused charge takes nothing from either budget.
//
// The byte budgets are GCRA buckets of the shared rate limiter (package
// ratelimit) with a cost in KiB: on Redis or PostgreSQL one node's budget
// is every node's budget, and while the shared store fails the limiter
// falls back to this process's buckets. The concurrency caps are counted
// in this process: each node admits its own PlayerConcurrent and
// GlobalConcurrent uploads (a cap on the work one process does at once).
type Budgets struct {
	cfg BudgetConfig
	lim *ratelimit.Limiter

	step int64 // what a Meter charges at a time

	mu     sync.Mutex
	active map[string]int // uploads running per player
	total  int
}

// BudgetConfig configures Budgets; zero values mean the defaults, a
// negative concurrency or an unlimited Limit means no limit.
type BudgetConfig struct {
	PlayerConcurrent int             // default 1
	GlobalConcurrent int             // default 4
	PlayerBytes      ratelimit.Limit // KiB per window, default 3 MiB a minute
	GlobalBytes      ratelimit.Limit // default 16 MiB a minute
}

// Default byte budgets, in KiB (the unit of the buckets: a cost in bytes
// would make GCRA's emission interval, window/quota in whole µs, round
// 16 MiB a minute to 3 µs a byte, 20% off).
var (
	DefaultPlayerBytes = ratelimit.Limit{Quota: 3 << 10, Window: time.Minute}
	DefaultGlobalBytes = ratelimit.Limit{Quota: 16 << 10, Window: time.Minute}
)

// NewBudgets returns budgets deciding bytes on lim (a memory-only limiter
// when nil).
func NewBudgets(cfg BudgetConfig, lim *ratelimit.Limiter) *Budgets {
	if cfg.PlayerConcurrent == 0 {
		cfg.PlayerConcurrent = 1
	}
	if cfg.GlobalConcurrent == 0 {
		cfg.GlobalConcurrent = 4
	}
	if cfg.PlayerBytes == (ratelimit.Limit{}) {
		cfg.PlayerBytes = DefaultPlayerBytes
	}
	if cfg.GlobalBytes == (ratelimit.Limit{}) {
		cfg.GlobalBytes = DefaultGlobalBytes
	}
	if lim == nil {
		lim = ratelimit.New(ratelimit.Config{})
	}
	b := &Budgets{cfg: cfg, lim: lim, active: map[string]int{}, step: Step}
	// A step is at most a quarter of the smaller byte budget, so that a
	// small budget still admits bodies of unknown length.
	for _, l := range []ratelimit.Limit{cfg.PlayerBytes, cfg.GlobalBytes} {
		if !l.Unlimited() {
			b.step = max(min(b.step, int64(l.Quota)<<10/4), 1<<10)
		}
	}
	return b
}

// Config returns the budgets' configuration with the defaults filled in.
func (b *Budgets) Config() BudgetConfig { return b.cfg }

// Refusal says which budget refused and when to retry.
type Refusal struct {
	Budget     string // "player_concurrency", "global_concurrency", "player_bytes", "global_bytes"
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("the %s budget for evidence uploads is spent; retry in %s", r.Budget, r.RetryAfter.Round(time.Second))
}

// Acquire admits one more upload of player, or refuses it. release must
// be called once the upload ends.
func (b *Budgets) Acquire(player string) (release func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.GlobalConcurrent > 0 && b.total >= b.cfg.GlobalConcurrent {
		return nil, &Refusal{"global_concurrency", time.Second}
	}
	if b.cfg.PlayerConcurrent > 0 && b.active[player] >= b.cfg.PlayerConcurrent {
		return nil, &Refusal{"player_concurrency", time.Second}
	}
	b.total++
	b.active[player]++
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.total--
			if b.active[player]--; b.active[player] <= 0 {
				delete(b.active, player)
			}
		})
	}, nil
}

func kib(n int64) int { return int((n + 1023) >> 10) }

// byteBudget is one of the two byte budgets, in the order Charge takes
// them.
type byteBudget struct {
	name, key string
	lim       ratelimit.Limit
}

func (b *Budgets) byteBudgets(player string) [2]byteBudget {
	return [2]byteBudget{{"global_bytes", ratelimit.EvidenceGlobal.Name(), b.cfg.GlobalBytes},
		{"player_bytes", ratelimit.EvidencePlayer.Name(player), b.cfg.PlayerBytes}}
}

// Charge takes n bytes (rounded up to KiB) from the global and the
// player's byte budgets, before they are read. The global budget is taken
// first and given back if the player's refuses: a refusal, a *Refusal,
// charges neither budget, so neither a spent global budget nor a spent
// player's budget drains the other.
func (b *Budgets) Charge(ctx context.Context, player string, n int64) error {
	if n <= 0 {
		return nil
	}
	cost := kib(n)
	bbs := b.byteBudgets(player)
	for i, c := range bbs {
		if c.lim.Unlimited() {
			continue
		}
		var ref *Refusal
		if cost > c.lim.Quota {
			// More than the whole bucket: never admitted, so say when
			// the bucket is full rather than a wait that would not help.
			ref = &Refusal{c.name, c.lim.Window}
		} else if r := b.lim.Take(ctx, ratelimit.EvidencePlayer.Scope, c.key, c.lim, cost); !r.Allowed {
			ref = &Refusal{c.name, r.RetryAfter}
		}
		if ref != nil {
			for _, p := range bbs[:i] {
				b.lim.Refund(ctx, p.key, p.lim, cost)
			}
			return ref
		}
	}
	return nil
}

// Refund gives back n bytes (in whole KiB, rounded down) that Charge took
// and that were not read.
func (b *Budgets) Refund(ctx context.Context, player string, n int64) {
	if n < 1024 {
		return
	}
	for _, c := range b.byteBudgets(player) {
		b.lim.Refund(ctx, c.key, c.lim, int(n>>10))
	}
}

// Step is how many bytes a Meter charges at a time, at most.
const Step = 64 << 10

// Meter returns a reader of r that charges the budgets ahead of what it
// reads, at most Step bytes at a time and never past declared (a
// Content-Length, which net/http never reads past; 0 or less: unknown). A
// refusal ends the reading with the *Refusal as the error. Settle gives
// back what was charged and not read: a body that declares 1 MB and sends
// 20 bytes costs 1 KiB once settled.
func (b *Budgets) Meter(ctx context.Context, player string, r io.Reader, declared int64) *Meter {
	return &Meter{b: b, ctx: ctx, player: player, r: r, declared: declared}
}

// Meter is a reader that charges the byte budgets as it reads (see
// Budgets.Meter).
type Meter struct {
	b        *Budgets
	ctx      context.Context
	player   string
	r        io.Reader
	declared int64
	paid     int64 // bytes charged, in whole KiB steps
	read     int64
	err      error
}

func (m *Meter) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.read >= m.paid {
		step := m.b.step
		if m.declared > 0 {
			if step = min(step, m.declared-m.paid); step <= 0 {
				// All declared bytes are paid for: net/http reads no
				// more than those, so what comes now is the end.
				n, err := m.r.Read(p)
				m.read += int64(n)
				return n, err
			}
		}
		step = int64(kib(step)) << 10
		if err := m.b.Charge(m.ctx, m.player, step); err != nil {
			m.err = err
			return 0, err
		}
		m.paid += step
	}
	if room := m.paid - m.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := m.r.Read(p)
	m.read += int64(n)
	return n, err
}

// Settle gives back what was charged and not read, in whole KiB. Call it
// once the body is done with.
func (m *Meter) Settle() {
	unread := m.paid - int64(kib(m.read))<<10
	m.paid -= unread
	m.b.Refund(context.WithoutCancel(m.ctx), m.player, unread)
}
