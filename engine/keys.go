package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"unsafe"

	"github.com/podiumhq/podium"
)

// Keys is the engine's keyring: the API keys by secret hash, loaded from
// the store, and the admin secret's hash. It authenticates every request
// (then asks the modules' Authenticators: sessions), and creates, lists
// and revokes scoped keys. Engine.Keys returns it.
type Keys struct {
	store  podium.Store
	now    podium.Clock
	health *health // writes are refused, and store failures recorded, as the engine's
	// sessions resolves a hash no key has (module.go: the Authenticators);
	// changed tells the other nodes (notices.go); revoked ends what a
	// revoked key opened (the listener's live streams).
	sessions func(hash string) (*podium.APIKey, bool)
	changed  func(revoked ...string)
	revoked  func(id string)

	mu     sync.RWMutex
	byHash map[string]*podium.APIKey
	admin  [32]byte // SHA-256 of the admin secret
}

// Keys returns the engine's keyring.
func (e *Engine) Keys() *Keys { return e.keys }

func newKeys(e *Engine) *Keys {
	return &Keys{store: e.store, now: e.now, health: &e.health, byHash: map[string]*podium.APIKey{},
		sessions: e.life.authenticate,
		changed:  func(revoked ...string) { e.sh.changed(revoked...) }, // nil-safe; e.sh is set after newKeys
		revoked: func(id string) {
			if e.listener != nil { // read now: SetListener comes after New
				e.listener.KeyRevoked(id)
			}
		}}
}

// AdminKey is the principal of requests made with the admin secret.
var AdminKey = &podium.APIKey{ID: "admin", Name: "admin", Scopes: []string{podium.ScopeAdmin}, Boards: []string{}}

// HashSecret returns the hex SHA-256 of an API key secret, as stored.
func HashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewSecret returns a fresh random secret with a recognisable prefix.
func NewSecret() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "pdm_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// SetAdminSecret sets the secret of the admin principal.
func (kr *Keys) SetAdminSecret(secret string) {
	kr.mu.Lock()
	kr.admin = sha256.Sum256([]byte(secret))
	kr.mu.Unlock()
}

// load reads the scoped keys from the store (Start).
func (kr *Keys) load(ctx context.Context) error {
	keys, err := kr.store.Keys(ctx)
	if err != nil {
		return err
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	kr.byHash = make(map[string]*podium.APIKey, len(keys))
	for i := range keys {
		kr.byHash[keys[i].Hash] = &keys[i]
	}
	return nil
}

// Authenticate returns the key a secret belongs to: the admin, a scoped
// key, or a module's (a player session).
func (kr *Keys) Authenticate(secret string) (*podium.APIKey, bool) {
	// The secret's bytes, not a copy: SHA-256 only reads them, and a copy
	// of a secret longer than 32 bytes costs an allocation per request.
	h := sha256.Sum256(unsafe.Slice(unsafe.StringData(secret), len(secret)))
	var (
		hash string
		k    *podium.APIKey
		ok   bool
	)
	kr.mu.RLock()
	admin := subtle.ConstantTimeCompare(h[:], kr.admin[:]) == 1
	if !admin { // the admin's requests need no hex string (one allocation each)
		hash = hex.EncodeToString(h[:])
		k, ok = kr.byHash[hash]
	}
	kr.mu.RUnlock()
	if admin {
		return AdminKey, true
	}
	if ok {
		return k, true
	}
	return kr.sessions(hash) // a player session (module.go)
}

// Create stores a new scoped key (already normalized) and returns it with
// its secret, which is shown only this once. While writes are refused, or
// when the store fails, ECodeUnavailable (or ECodeOutcomeUnknown).
func (kr *Keys) Create(ctx context.Context, k *podium.APIKey) (podium.APIKey, string, error) {
	if err := kr.health.refusal(); err != nil {
		return podium.APIKey{}, "", err
	}
	secret := NewSecret()
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return podium.APIKey{}, "", err
	}
	k.ID = "key_" + hex.EncodeToString(id[:])
	k.Hash = HashSecret(secret)
	k.CreatedAt = kr.now().UTC().Truncate(1e6)
	if err := kr.store.PutKey(ctx, k); err != nil {
		return podium.APIKey{}, "", kr.health.storeFailed("put key", err)
	}
	kr.put(k)
	kr.changed()
	return *k, secret, nil
}

// put adds or replaces a key.
func (kr *Keys) put(k *podium.APIKey) {
	cp := *k
	kr.mu.Lock()
	defer kr.mu.Unlock()
	for h, old := range kr.byHash {
		if old.ID == k.ID && h != k.Hash {
			delete(kr.byHash, h)
		}
	}
	kr.byHash[k.Hash] = &cp
}

// ids lists the ids of the keys held.
func (kr *Keys) ids() []string {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	out := make([]string, 0, len(kr.byHash))
	for _, k := range kr.byHash {
		out = append(out, k.ID)
	}
	return out
}

// remove forgets the key with an id (revoked).
func (kr *Keys) remove(id string) {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	for h, k := range kr.byHash {
		if k.ID == id {
			delete(kr.byHash, h)
		}
	}
}

// List returns every scoped key (without secrets), oldest first, from
// the store.
func (kr *Keys) List(ctx context.Context) ([]podium.APIKey, error) {
	return kr.store.Keys(ctx)
}

// Delete revokes a key at once. A missing key is ECodeNotFound; while
// writes are refused, or when the store fails, ECodeUnavailable (or
// ECodeOutcomeUnknown).
func (kr *Keys) Delete(ctx context.Context, id string) error {
	if err := kr.health.refusal(); err != nil {
		return err
	}
	if err := kr.store.DeleteKey(ctx, id); err != nil {
		return kr.health.storeFailed("delete key", err)
	}
	kr.revoke(id)
	kr.changed(id)
	return nil
}

// revoke forgets a revoked key, then ends what it opened: after the
// keyring forgot it nothing can authenticate with the key again, and the
// live streams that did are closed.
func (kr *Keys) revoke(id string) {
	kr.remove(id)
	kr.revoked(id)
}
