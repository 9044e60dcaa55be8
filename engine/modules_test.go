package engine_test

import (
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/tournament"
)

// joins returns the tournament module of an engine made by modules.Engine.
func joins(e *engine.Engine) *tournament.Module {
	for _, m := range e.Modules() {
		if t, ok := m.(*tournament.Module); ok {
			return t
		}
	}
	panic("no tournament module")
}
