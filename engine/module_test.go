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

// modRecorder is a test module with every lifecycle interface; it records
// the calls it gets, in order, into a log it shares with the other
// modules of its engine.
type modRecorder struct {
	name string
	log  *callLog
	host engine.Host
	// refusal is what Host.WriteRefusal said during each call.
	refusal map[string]error
	stopped chan struct{} // closed when its Host.Go goroutine returns
	secret  string        // the hash Authenticate knows
}

type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}

func (r *modRecorder) Name() string { return r.name }

func (r *modRecorder) Provision(h engine.Host) {
	r.host = h
	r.log.add(r.name + ".Provision")
}

func (r *modRecorder) Load(ctx context.Context) error {
	r.log.add(r.name + ".Load")
	r.refusal["Load"] = r.host.WriteRefusal()
	return nil
}

func (r *modRecorder) Start() {
	r.log.add(r.name + ".Start")
	r.host.Go(func(ctx context.Context) {
		<-ctx.Done()
		close(r.stopped)
	})
}

func (r *modRecorder) Authenticate(hash string) (*podium.APIKey, bool) {
	if hash != r.secret {
		return nil, false
	}
	return &podium.APIKey{ID: r.name, Player: "p"}, true
}

func (r *modRecorder) Revoked(id string) {}

func (r *modRecorder) Follow(ctx context.Context, c podium.Change) error { return nil }
func (r *modRecorder) Resync(ctx context.Context) error                  { return nil }

// TestModuleLifecycle: the engine provisions its modules in New, loads
// them in Start before it takes writes and starts them after, each step
// in registration order; Authenticate asks them for a secret that is no
// API key; Close ends and joins what they run on the Host.
func TestModuleLifecycle(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := &callLog{}
	a := &modRecorder{name: "a", log: log, refusal: map[string]error{}, stopped: make(chan struct{}), secret: engine.HashSecret("sa")}
	b := &modRecorder{name: "b", log: log, refusal: map[string]error{}, stopped: make(chan struct{}), secret: engine.HashSecret("sb")}
	eng := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Modules: []engine.Module{a, b}})
	if got, want := log.take(), []string{"a.Provision", "b.Provision"}; !slices.Equal(got, want) {
		t.Fatalf("New called %v, want %v", got, want)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := log.take(), []string{"a.Load", "b.Load", "a.Start", "b.Start"}; !slices.Equal(got, want) {
		t.Fatalf("Start called %v, want %v", got, want)
	}
	for _, r := range []*modRecorder{a, b} {
		if podium.ErrorCode(r.refusal["Load"]) != podium.ECodeUnavailable {
			t.Errorf("%s: writes during Load: refusal %v, want unavailable (still loading)", r.name, r.refusal["Load"])
		}
	}
	if k, ok := eng.Keys().Authenticate("sb"); !ok || k.ID != "b" {
		t.Fatalf("Authenticate(b's secret) = %+v, %v", k, ok)
	}
	if _, ok := eng.Keys().Authenticate("nobody's"); ok {
		t.Fatal("an unknown secret authenticates")
	}
	select {
	case <-a.stopped:
		t.Fatal("a module's goroutine ended before Close")
	default:
	}
	eng.Close()
	for _, r := range []*modRecorder{a, b} {
		select {
		case <-r.stopped:
		default:
			t.Errorf("%s: Close returned before the module's goroutine ended", r.name)
		}
		if err := r.host.WriteRefusal(); err == nil {
			t.Errorf("%s: the host takes writes after Close", r.name)
		}
	}
}
