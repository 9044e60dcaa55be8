package engine_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// A restore that makes a new #1 in the middle of a group: a later score of
// the same group behind it must not be announced as the new leader (the
// feed's tracked #1 is forgotten by the restore, not left stale).
func TestRestoreInGroupFeedLeader(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := modules.Engine(engine.Config{Store: st, Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Best, Public: true}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	// Hold the writer, queue score, restore, score, then let them run as
	// one group.
	release, held := make(chan struct{}), make(chan struct{})
	go e.OnWriter(ctx, func() { close(held); <-release })
	<-held
	queued := func(n int) {
		for e.QueuedOps() < n {
			time.Sleep(time.Millisecond)
		}
	}
	errs := make(chan error, 3)
	score := func(player string, v int64) {
		_, err := e.Submit(ctx, []engine.Score{{Board: "b", Player: player, Keys: []int64{v}}}, true, nil)
		errs <- err
	}
	go score("alice", 10)
	queued(1)
	go func() {
		res, err := e.Restore(ctx, "b", []engine.RestoreItem{{Period: "all", Player: "bob", Keys: []int64{20}, At: now}})
		if err == nil && !res[0].Restored {
			err = res[0].Err
		}
		errs <- err
	}()
	queued(2)
	go score("carol", 15)
	queued(3)
	close(release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	items, err := feedOf(e).Feed(ctx, feed.Read{Board: "b", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Kind == podium.FeedNewLeader && it.Player != "alice" {
			t.Errorf("new leader %s in the feed: bob, restored in the same group, is ahead", it.Player)
		}
	}
	if len(items) != 3 {
		for _, it := range items {
			t.Logf("event %s %s %v old=%v from=%s", it.Kind, it.Player, it.Keys, it.Old, it.Other)
		}
		t.Errorf("%d feed events, want 3 (alice's best and lead, carol's best)", len(items))
	}
}
