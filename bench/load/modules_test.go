package main

import (
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
)

// newEngine is engine.New with the standard modules registered, as the
// server runs it, unless cfg names its own.
func newEngine(cfg engine.Config) *engine.Engine {
	if cfg.Modules == nil {
		cfg.Modules = modules.All(cfg.Store, cfg.Logger)
	}
	return engine.New(cfg)
}
