package main

import (
	"flag"
	"time"

	"github.com/podiumhq/podium/evidence"
	"github.com/podiumhq/podium/ratelimit"
)

// EvidenceConfig is the flags of evidence uploads (docs/API.md
// "Evidence"). Per-board limits are board settings; these are the budgets
// every board shares. Empty or zero values (the zero Config that tests
// embed) mean the defaults.
type EvidenceConfig struct {
	PlayerConcurrent int    // uploads of one player at once, per node
	GlobalConcurrent int    // uploads at once, per node
	PlayerBudget     string // KiB per window for each player, "N/window" or "off"
	GlobalBudget     string // KiB per window in all
	SweepEvery       time.Duration
}

func (c *EvidenceConfig) flags(fs *flag.FlagSet) {
	fs.IntVar(&c.PlayerConcurrent, "evidence-player-concurrent", 1, "evidence uploads: one player's uploads at once, per node (more get 429)")
	fs.IntVar(&c.GlobalConcurrent, "evidence-global-concurrent", 4, "evidence uploads: uploads at once, per node (more get 429)")
	fs.StringVar(&c.PlayerBudget, "evidence-player-budget", "3072/1m", "evidence uploads: KiB each player may send per window, shared by the nodes, N/window or off")
	fs.StringVar(&c.GlobalBudget, "evidence-global-budget", "16384/1m", "evidence uploads: KiB all players may send per window, shared by the nodes, N/window or off")
	fs.DurationVar(&c.SweepEvery, "evidence-sweep-every", time.Minute, "evidence uploads: how often expired evidence is deleted, in bounded batches")
}

// budgets checks the flags and returns the budgets; a mistake is a usage
// error naming the flag.
func (c *EvidenceConfig) budgets() (evidence.BudgetConfig, error) {
	bc := evidence.BudgetConfig{PlayerConcurrent: c.PlayerConcurrent, GlobalConcurrent: c.GlobalConcurrent}
	for _, f := range []struct {
		name, v string
		dst     *ratelimit.Limit
	}{{"evidence-player-budget", c.PlayerBudget, &bc.PlayerBytes}, {"evidence-global-budget", c.GlobalBudget, &bc.GlobalBytes}} {
		if f.v == "" {
			continue
		}
		l, err := ratelimit.ParseLimit(f.v)
		if err != nil {
			return bc, usagef("serve", "--%s: %v", f.name, err)
		}
		if l.Unlimited() {
			l = ratelimit.Limit{Quota: -1} // off (the zero Limit means the default)
		}
		*f.dst = l
	}
	if c.PlayerConcurrent < 0 || c.GlobalConcurrent < 0 {
		return bc, usagef("serve", "--evidence-player-concurrent and --evidence-global-concurrent must be 0 or more")
	}
	return bc, nil
}

// module is the evidence module's configuration.
func (c *EvidenceConfig) module() evidence.Config {
	return evidence.Config{SweepEvery: c.SweepEvery}
}
