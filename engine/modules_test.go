package engine_test

import (
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/tournament"
)

// newEngine is engine.New with the standard modules registered, as the
// server runs it, unless cfg names its own.
func newEngine(cfg engine.Config) *engine.Engine {
	if cfg.Modules == nil {
		cfg.Modules = modules.All(cfg.Store, cfg.Logger)
	}
	return engine.New(cfg)
}

// joins returns the tournament module of an engine made by newEngine.
func joins(e *engine.Engine) *tournament.Module {
	for _, m := range e.Modules() {
		if t, ok := m.(*tournament.Module); ok {
			return t
		}
	}
	panic("no tournament module")
}
