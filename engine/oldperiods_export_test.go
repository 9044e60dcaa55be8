package engine

import "context"

// SweepOldForTest puts the periods that aged out under the old-period
// budget and shrinks to it, as the sweeper does every oldSweepEvery.
func (e *Engine) SweepOldForTest() { e.old.sweepOld() }

// OldPeriods reports the old-period budget's state (also exported as the
// podium_old_periods_* metrics).
func (e *Engine) OldPeriods() OldPeriodStats { return e.old.stats() }

// CheckpointForTest writes every dirty entry to the store now, on the
// writer, as the once-a-second housekeeping would.
func (e *Engine) CheckpointForTest() error {
	return e.send(context.Background(), &op{kind: opFunc, p: func() { e.pl.checkpoint(0) }})
}
