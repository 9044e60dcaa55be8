package engine

import "github.com/podiumhq/podium"

// moduleRows are a group's rows of the feature modules: the activity feed
// and tournaments. The batch carries them as parts made by the
// store (podium.Part; seal), which the store writes in the group's
// transaction; the group keeps them too, for what the engine does once it
// is committed or has failed (feedCommitted, tourneyCommitted).
type moduleRows struct {
	feed    []podium.FeedEvent   // feed.go, settle.go
	tourney *podium.TourneyBatch // settle.go (joins: the tournament module's)
}

// merge appends src's rows to r's, for groups that share a transaction;
// fences are not merged (a fenced group, a settlement, commits alone).
func (r *moduleRows) merge(src *moduleRows) {
	r.feed = append(r.feed, src.feed...)
	r.tourney = podium.MergeTourney(r.tourney, src.tourney)
}

// reset empties r, keeping the capacity of its slices.
func (r *moduleRows) reset() {
	r.feed, r.tourney = r.feed[:0], nil
}

// seal sets the parts of b to r's rows, made by st: the tournament's, the
// feed's (a store writes the tournament's first, its fence before the
// log, and the others in this order); the PartMakers' follow (review's). Rows of a module the
// store lacks cannot arise: the module is off then.
func (r *moduleRows) seal(b *podium.Batch, st podium.Store) {
	clear(b.Parts)
	b.Parts = b.Parts[:0]
	if r.tourney.Len() > 0 {
		if ts, ok := st.(podium.TourneyStore); ok {
			b.Parts = append(b.Parts, ts.TourneyPart(r.tourney))
		}
	}
	if len(r.feed) > 0 {
		if fs, ok := st.(podium.FeedStore); ok {
			b.Parts = append(b.Parts, fs.FeedPart(r.feed))
		}
	}
}
