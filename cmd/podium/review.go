package main

import (
	"context"
	"fmt"
	"io"

	"github.com/podiumhq/podium"
)

// copyReview copies the review queue (every item with its decision) and
// the freezes for podium migrate, after the boards' logs, so that an
// approved item's seq names its copied log row. Items already on the
// target are left alone, so a migration run again goes on where it
// stopped.
func copyReview(ctx context.Context, src, dst podium.Store, out io.Writer) error {
	ss, ok1 := src.(podium.ReviewStore)
	ds, ok2 := dst.(podium.ReviewStore)
	if !ok1 || !ok2 {
		return nil
	}
	freezes, err := ss.Freezes(ctx)
	if err != nil {
		return fmt.Errorf("freezes: %w", err)
	}
	for i := range freezes {
		if err := ds.PutFreeze(ctx, &freezes[i]); err != nil {
			return fmt.Errorf("freeze %s: %w", freezes[i].Player, err)
		}
	}
	n := 0
	f := podium.ReviewFilter{Limit: 1000}
	for {
		items, err := ss.ReviewItems(ctx, f)
		if err != nil {
			return fmt.Errorf("review items: %w", err)
		}
		var (
			held []podium.ReviewItem
			decs []podium.ReviewDecision
		)
		for _, it := range items {
			have, err := ds.ReviewItem(ctx, it.ID)
			if err != nil {
				return fmt.Errorf("review item %s: %w", it.ID, err)
			}
			if have != nil {
				continue
			}
			held = append(held, it)
			if it.Status != podium.ReviewPending {
				decs = append(decs, podium.ReviewDecision{ID: it.ID, Status: it.Status, At: it.DecidedAt,
					By: it.DecidedBy, Note: it.Note, Seq: it.Seq})
			}
		}
		if err := dst.Commit(ctx, &podium.Batch{Parts: []podium.Part{ds.ReviewPart(held, decs)}}); err != nil {
			return fmt.Errorf("review items: %w", err)
		}
		n += len(held)
		if len(items) < f.Limit {
			break
		}
		last := items[len(items)-1]
		f.After = podium.ReviewCursor{At: last.SubmittedAt, ID: last.ID}
	}
	fmt.Fprintf(out, "migrate: %d review items and %d freezes copied\n", n, len(freezes))
	return nil
}
