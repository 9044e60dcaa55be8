package client_test

import (
	"github.com/podiumhq/podium/ctf"
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

// contestService is the service of e's contests module (package ctf),
// which the server serves.
func contestService(e *engine.Engine) *ctf.Service {
	for _, m := range e.Modules() {
		if c, ok := m.(*ctf.Module); ok {
			return c.Service()
		}
	}
	return nil
}
