package engine_test

import (
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/tournament"
)

// tourneyOf returns the tournament module of an engine made by
// modules.Engine.
func tourneyOf(e *engine.Engine) *tournament.Module {
	for _, m := range e.Modules() {
		if t, ok := m.(*tournament.Module); ok {
			return t
		}
	}
	panic("no tournament module")
}

// noScheduler gives cfg the standard modules, the tournament module's
// settlement scheduler off (tests call SettleDue).
func noScheduler(cfg engine.Config) engine.Config {
	cfg.Modules = modules.With(modules.Config{Store: cfg.Store, Logger: cfg.Logger, Tournament: tournament.Config{SettleEvery: -1}})
	return cfg
}
