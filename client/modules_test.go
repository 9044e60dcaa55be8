package client_test

import (
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
)

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
