package feed_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/sqlite"
)

// plainStore hides the store's feed.
type plainStore struct{ podium.Store }

// start runs an engine over st with the feed module alone.
func start(t *testing.T, st podium.Store, c feed.Config) *feed.Module {
	t.Helper()
	m := feed.New(c)
	e := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Modules: []engine.Module{m}})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return m
}

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// The module keeps the cap it is given (the default without one), and is
// off, answering 503, on a store that keeps no feed.
func TestModuleCapAndOff(t *testing.T) {
	ctx := context.Background()
	t.Run("Default", func(t *testing.T) {
		if n := start(t, open(t), feed.Config{}).Cap(); n != feed.DefaultCap {
			t.Fatalf("Cap() = %d, want %d", n, feed.DefaultCap)
		}
	})
	t.Run("Configured", func(t *testing.T) {
		m := start(t, open(t), feed.Config{Cap: 7})
		if n := m.Cap(); n != 7 {
			t.Fatalf("Cap() = %d, want 7", n)
		}
		if _, err := m.Feed(ctx, feed.Read{Limit: 8}); podium.ErrorCode(err) != podium.ECodeInvalid {
			t.Fatalf("Feed(limit above the cap) = %v, want %s", err, podium.ECodeInvalid)
		}
	})
	t.Run("ErrNoFeed", func(t *testing.T) {
		m := start(t, plainStore{open(t)}, feed.Config{})
		if n := m.Cap(); n != 0 {
			t.Fatalf("Cap() = %d without a feed store, want 0", n)
		}
		if _, err := m.Feed(ctx, feed.Read{Limit: 1}); podium.ErrorCode(err) != podium.ECodeUnavailable {
			t.Fatalf("Feed = %v, want %s", err, podium.ECodeUnavailable)
		}
		err := m.AppendFeed(ctx, []podium.FeedEvent{{Board: "b", Kind: podium.FeedTournamentSettled}})
		if podium.ErrorCode(err) != podium.ECodeUnavailable {
			t.Fatalf("AppendFeed = %v, want %s", err, podium.ECodeUnavailable)
		}
	})
}
