// Package modules lists the feature modules a podium server registers with
// its engine, one line each, in the order their hooks run (see
// engine/hooks.go and engine/module.go). cmd/podium's wiring registers
// these; a test that wants the server as it runs uses them too, and a test
// of one feature may build an engine with exactly the modules it needs
// instead.
package modules

import (
	"log/slog"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/aggregate"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/evidence"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/groups"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/limits"
	"github.com/podiumhq/podium/retention"
	"github.com/podiumhq/podium/review"
	"github.com/podiumhq/podium/sessions"
	"github.com/podiumhq/podium/tournament"
	"github.com/podiumhq/podium/webhooks"
)

// Config configures the standard modules; the zero value of each module's
// part means its defaults.
type Config struct {
	Store    podium.Store
	Logger   *slog.Logger
	Sessions sessions.Config  // player sessions (--session-* flags)
	Evidence evidence.Config  // the evidence sweeper (--evidence-sweep-every)
	Contests ctf.ModuleConfig // CTF contests (shared mode: broker, node, --poll-every)
	Feed     feed.Config      // the activity feed (--feed-cap)
	Webhooks webhooks.Config  // webhooks (--webhook-* flags)
	// Tournament configures tournaments: the settlement scheduler's
	// period (negative: none, for tests and tools that settle themselves).
	Tournament tournament.Config
	// Retention configures the sweep of periods past keep_periods.
	Retention retention.Config
	// League configures leagues: the settlement scheduler's period
	// (negative: none, for tests and tools that settle themselves).
	League league.Config
}

// All returns the standard modules over store with their defaults.
func All(store podium.Store, log *slog.Logger) []engine.Module {
	return With(Config{Store: store, Logger: log})
}

// With returns the standard modules configured by c. A new feature adds
// its line here.
func With(c Config) []engine.Module {
	return []engine.Module{
		limits.New(c.Store, c.Logger), // key bounds and quotas
		aggregate.New(),               // aggregate and best-k-sum boards over others
		groups.New(),                  // groups and group boards (after aggregate: its refusals of a board change first)
		feed.New(c.Feed),              // the activity feed (before tournament and review: its Finisher, Forgetter and part come first, as in the core before)
		tournament.New(c.Tournament),  // tournament windows, joins, points boards, settlement (after aggregate: a DELETE hears its refusal first)
		league.New(c.League),          // leagues: placement on a first score of a period, settlement at its end (after tournament: a league board is neither)
		sessions.New(c.Sessions),      // player sessions (authentication, change feed)
		evidence.New(c.Evidence),      // evidence uploads (storage, sweeper)
		review.New(),                  // moderation: holds, freezes, decisions (its part after the feed's)
		ctf.NewModule(c.Contests),     // CTF contests (package contest's reducer, ctf's service)
		retention.New(c.Retention),    // deletes the periods boards no longer keep (keep_periods), off the write path
		webhooks.New(c.Webhooks),      // webhooks: the outbox of the activity and board events, their delivery (last: it hears every module's events)
	}
}

// Engine is engine.New with the standard modules registered over
// cfg.Store (their defaults), as the server runs them, unless cfg names
// its own: for the tests and tools that want the server's engine.
func Engine(cfg engine.Config) *engine.Engine {
	if cfg.Modules == nil {
		cfg.Modules = All(cfg.Store, cfg.Logger)
	}
	return engine.New(cfg)
}
