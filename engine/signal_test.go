package engine_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// signaller signals each logged score in its group (a Scorer).
type signaller struct{}

func (signaller) Name() string { return "signaller" }

func (signaller) Scored(g *engine.Group, s *engine.Scored) {
	g.Signal(engine.Signal{Kind: "scored", Board: s.Def.ID, Cause: s.Player, At: g.Now(), Value: s.Seq})
}

// signalSink records the signals it hears in groups, how those groups
// ended, and the signals of batches outside groups once stored.
type signalSink struct {
	mu       sync.Mutex
	inGroup  []string // kind/cause, as heard
	finished []string // kind/cause of a group's signals once it committed
	asked    []string // kind/cause of a batch's signals, asked for parts
	stored   []string // and once the batch committed
}

func (*signalSink) Name() string { return "sink" }

func (k *signalSink) Signal(g *engine.Group, s *engine.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inGroup = append(k.inGroup, s.Kind+"/"+s.Cause)
	got, _ := g.Slot(k).([]string)
	g.SetSlot(k, append(got, s.Kind+"/"+s.Cause))
}

func (k *signalSink) Finished(g *engine.Group, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if got, _ := g.Slot(k).([]string); err == nil {
		k.finished = append(k.finished, got...)
	}
}

func (k *signalSink) SignalParts(_ podium.Store, ss []engine.Signal) ([]podium.Part, func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var names []string
	for _, s := range ss {
		names = append(names, s.Kind+"/"+s.Cause)
	}
	k.asked = append(k.asked, names...)
	return nil, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.stored = append(k.stored, names...)
	}
}

func (k *signalSink) take() (inGroup, finished, asked, stored []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	inGroup, finished, asked, stored = k.inGroup, k.finished, k.asked, k.stored
	k.inGroup, k.finished, k.asked, k.stored = nil, nil, nil, nil
	return
}

// TestSignals: a signal announced in a group reaches the SignalSinks on
// the writer and goes with the group's commit; the signals of a batch
// committed through Exclusive.Locked are offered to the sinks for that
// batch, and the sinks hear they are stored only if it commits.
func TestSignals(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultyStore{Store: st}
	sink := &signalSink{}
	eng := engine.New(engine.Config{Store: fs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{signaller{}, sink}})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); st.Close() })
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Best}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	submit := func(player string) error {
		_, err := eng.Submit(ctx, []engine.Score{{Board: "b", Player: player, Keys: []int64{1}}}, true, nil)
		return err
	}
	if err := submit("alice"); err != nil {
		t.Fatal(err)
	}
	fs.fail.Store(true)
	if err := submit("bob"); err == nil {
		t.Fatal("a submission succeeded while commits fail")
	}
	fs.fail.Store(false)
	inGroup, finished, asked, stored := sink.take()
	if !slices.Equal(inGroup, []string{"scored/alice", "scored/bob"}) || !slices.Equal(finished, []string{"scored/alice"}) ||
		asked != nil || stored != nil {
		t.Fatalf("in groups: heard %v, finished %v, asked %v, stored %v", inGroup, finished, asked, stored)
	}

	locked := func(sig string) error {
		return eng.Exclusive(ctx, func(x engine.Exclusive) error {
			return x.Locked("b", nil, func(commit func(*podium.Batch, ...engine.Signal) error) error {
				return commit(&podium.Batch{}, engine.Signal{Kind: "decided", Board: "b", Cause: sig})
			})
		})
	}
	if err := locked("one"); err != nil {
		t.Fatal(err)
	}
	fs.failAll.Store(true)
	if err := locked("two"); err == nil {
		t.Fatal("a batch committed while commits fail")
	}
	fs.failAll.Store(false)
	inGroup, finished, asked, stored = sink.take()
	if inGroup != nil || finished != nil || !slices.Equal(asked, []string{"decided/one", "decided/two"}) ||
		!slices.Equal(stored, []string{"decided/one"}) {
		t.Fatalf("outside groups: heard %v, finished %v, asked %v, stored %v", inGroup, finished, asked, stored)
	}
}
