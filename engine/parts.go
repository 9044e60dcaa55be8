package engine

import "github.com/podiumhq/podium"

// moduleRows are a group's rows of the feature modules still in the
// engine: tournaments' (the feed keeps its own, feed/). The batch carries
// them as parts made by the store (podium.Part; seal), which the store
// writes in the group's transaction; the group keeps them too, for what
// the engine does once it is committed or has failed (tourneyCommitted).
type moduleRows struct {
	tourney *podium.TourneyBatch // settle.go (joins: the tournament module's)
}

// merge appends src's rows to r's, for groups that share a transaction;
// fences are not merged (a fenced group, a settlement, commits alone).
func (r *moduleRows) merge(src *moduleRows) {
	r.tourney = podium.MergeTourney(r.tourney, src.tourney)
}

// reset empties r.
func (r *moduleRows) reset() {
	r.tourney = nil
}

// seal sets the parts of b to r's rows, made by st: the tournament's (a
// store writes it first, its fence before the log); the PartMakers' follow
// (the feed's, then review's). Rows of a module the store lacks cannot
// arise: the module is off then.
func (r *moduleRows) seal(b *podium.Batch, st podium.Store) {
	clear(b.Parts)
	b.Parts = b.Parts[:0]
	if r.tourney.Len() > 0 {
		if ts, ok := st.(podium.TourneyStore); ok {
			b.Parts = append(b.Parts, ts.TourneyPart(r.tourney))
		}
	}
}
