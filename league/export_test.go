package league

import (
	"context"

	"github.com/podiumhq/podium"
)

// SettleUnder runs one settlement of period under lease l (tests: a
// second run, a stale lease).
func SettleUnder(m *Module, ctx context.Context, board, period string, l podium.Lease) (SettleReport, error) {
	return m.settleUnder(ctx, board, period, l)
}

// OnPrepared sets fn to run after each settlement's preparation off the
// writer, before its commit (tests: a period that moves in between).
func OnPrepared(m *Module, fn func(try int)) { m.prepared = fn }
