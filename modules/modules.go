// Package modules lists the feature modules a podium server registers with
// its engine, one line each, in the order their write-path hooks run (see
// engine/hooks.go). cmd/podium's wiring registers these; a test that wants
// the server as it runs uses them too, and a test of one feature may build
// an engine with exactly the modules it needs instead.
package modules

import (
	"log/slog"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/limits"
)

// All returns the standard modules over store. A new feature adds its
// line here.
func All(store podium.Store, log *slog.Logger) []engine.Module {
	return []engine.Module{
		limits.New(store, log), // key bounds and quotas
	}
}
