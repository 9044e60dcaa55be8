// Package review is the moderation module (podium/review.go has its
// domain types): held submissions, frozen players and decisions.
//
// A submission is held on the writer (Hold, an engine.Holder), after its
// effect is computed: it is then stored as a review item in the group's
// transaction (this module's part; no seq, no log row, no entry change,
// no stream event, no feed event), and its answer says pending. An
// approval runs on the writer alone (engine.Exclusive): it reads the item
// where no other decision can interleave (after the writer's barrier on a
// store of its own; under the board's lock on a shared store), checks
// that it is still pending, and submits the held score as a score
// carrying the decision (an engine.Rider), which records it in the same
// group as the log row it writes. A rejection goes the same way and
// stores only the decision. The stores refuse to decide an item that is
// not pending (podium.ErrDecided), a second fence behind the locks.
//
// Freezes are kept in memory, loaded at start and followed on the change
// feed (a ChangePlayer change for the player): a writer catches up with
// the feed before it computes, so a freeze committed on one node holds the
// next submission on any node.
package review

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Engine is what the module asks of the engine.
type Engine interface {
	Lookup(id string) *engine.BoardState
	Exclusive(ctx context.Context, fn func(x engine.Exclusive) error) error
}

// EvidenceLookup returns what is known of the evidence of one submission
// (board, player, and the seq of its log row; 0 for a held submission,
// which has none yet), as a JSON object, or nil for none. The review queue
// shows what it returns as "evidence". Without a lookup (the default), the
// queue shows the evidence uploaded for the held item (package evidence),
// which its approval moves to the approved seq.
type EvidenceLookup func(ctx context.Context, board, player string, seq uint64, reviewID string) ([]byte, error)

// Module is moderation. Register it with one engine (engine.Config.Modules).
type Module struct {
	host     engine.Host
	eng      Engine
	store    podium.ReviewStore // nil: the store keeps no review queue
	evidence bool               // the store keeps evidence: an approval moves it
	lookup   EvidenceLookup

	mu     sync.RWMutex
	frozen map[string]podium.Freeze
}

var (
	_ engine.Provisioner = (*Module)(nil)
	_ engine.Loader      = (*Module)(nil)
	_ engine.Follower    = (*Module)(nil)
	_ engine.Holder      = (*Module)(nil)
	_ engine.PartMaker   = (*Module)(nil)
)

// New returns the moderation module.
func New() *Module { return &Module{frozen: map[string]podium.Freeze{}} }

// Name is "review".
func (m *Module) Name() string { return "review" }

// Provision takes the engine's store (its podium.ReviewStore, if it has
// one), clock and writer.
func (m *Module) Provision(h engine.Host) {
	m.host, m.eng = h, h.Engine()
	m.store, _ = h.Store().(podium.ReviewStore)
	_, m.evidence = h.Store().(podium.EvidenceStore)
}

// SetEvidenceLookup sets the lookup the review queue uses (nil: none).
// Call it before the engine starts.
func (m *Module) SetEvidenceLookup(f EvidenceLookup) { m.lookup = f }

func errNoReview() error {
	return podium.Errorf(podium.ECodeUnavailable, "this store keeps no review queue")
}

// newReviewID returns "rv_" and 16 random hex digits.
func newReviewID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "rv_" + hex.EncodeToString(b[:])
}

// Load reads every freeze (at start).
func (m *Module) Load(ctx context.Context) error { return m.loadFreezes(ctx) }

// Resync reads every freeze again, after missed changes (shared mode).
func (m *Module) Resync(ctx context.Context) error { return m.loadFreezes(ctx) }

// Follow reloads one player's freeze on a ChangePlayer change.
func (m *Module) Follow(ctx context.Context, c podium.Change) error {
	if c.Kind != podium.ChangePlayer {
		return nil
	}
	return m.refreshFreeze(ctx, c.Key)
}

func (m *Module) loadFreezes(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	list, err := m.store.Freezes(ctx)
	if err != nil {
		return err
	}
	f := make(map[string]podium.Freeze, len(list))
	for _, x := range list {
		f[x.Player] = x
	}
	m.mu.Lock()
	m.frozen = f
	m.mu.Unlock()
	return nil
}

// refreshFreeze reloads one player's freeze.
func (m *Module) refreshFreeze(ctx context.Context, player string) error {
	if m.store == nil {
		return nil
	}
	f, err := m.store.LoadFreeze(ctx, player)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f == nil {
		delete(m.frozen, player)
	} else {
		m.frozen[player] = *f
	}
	return nil
}

// Frozen returns a player's freeze, nil if the player is not frozen.
func (m *Module) Frozen(player string) *podium.Freeze {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if f, ok := m.frozen[player]; ok {
		return &f
	}
	return nil
}

// Freeze freezes a player: every new submission of theirs is held. Freezing
// a frozen player again replaces the reason.
func (m *Module) Freeze(ctx context.Context, player, by, reason string) (podium.Freeze, error) {
	if m.store == nil {
		return podium.Freeze{}, errNoReview()
	}
	if err := podium.ValidPlayerRef(player); err != nil {
		return podium.Freeze{}, err
	}
	if err := podium.ValidNote(reason, false); err != nil {
		return podium.Freeze{}, err
	}
	f := podium.Freeze{Player: player, By: by, Reason: reason, At: m.host.Now().UTC().Truncate(time.Millisecond)}
	if err := m.store.PutFreeze(ctx, &f); err != nil {
		return podium.Freeze{}, err
	}
	m.mu.Lock()
	m.frozen[player] = f
	m.mu.Unlock()
	m.host.Changed()
	return f, nil
}

// Unfreeze ends a player's freeze; held items stay held. A player not
// frozen is ECodeNotFound.
func (m *Module) Unfreeze(ctx context.Context, player string) error {
	if m.store == nil {
		return errNoReview()
	}
	if err := m.store.DeleteFreeze(ctx, player); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.frozen, player)
	m.mu.Unlock()
	m.host.Changed()
	return nil
}

// isFrozen reports whether a player is frozen.
func (m *Module) isFrozen(player string) bool {
	m.mu.RLock()
	_, ok := m.frozen[player]
	m.mu.RUnlock()
	return ok
}
