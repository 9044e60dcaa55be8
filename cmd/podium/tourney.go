package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// repairSettlements settles again, on a stopped server's store, every
// tournament whose payouts differ from its final ranks (engine.
// RepairSettlements): the part of rebuild that tournaments need.
func repairSettlements(ctx context.Context, store podium.Store) ([]string, error) {
	eng := engine.New(engine.Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SettleEvery: -1})
	if err := eng.Start(ctx); err != nil {
		return nil, err
	}
	defer eng.Close()
	return eng.RepairSettlements(ctx)
}
