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

// keyring holds the API keys by secret hash, loaded from the store.
type keyring struct {
	mu     sync.RWMutex
	byHash map[string]*podium.APIKey
	admin  [32]byte // SHA-256 of the admin secret
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
func (e *Engine) SetAdminSecret(secret string) {
	e.keys.mu.Lock()
	e.keys.admin = sha256.Sum256([]byte(secret))
	e.keys.mu.Unlock()
}

func (e *Engine) loadKeys(ctx context.Context) error {
	keys, err := e.store.Keys(ctx)
	if err != nil {
		return err
	}
	e.keys.mu.Lock()
	defer e.keys.mu.Unlock()
	e.keys.byHash = make(map[string]*podium.APIKey, len(keys))
	for i := range keys {
		e.keys.byHash[keys[i].Hash] = &keys[i]
	}
	return nil
}

// Authenticate returns the key a secret belongs to.
func (e *Engine) Authenticate(secret string) (*podium.APIKey, bool) {
	// The secret's bytes, not a copy: SHA-256 only reads them, and a copy
	// of a secret longer than 32 bytes costs an allocation per request.
	h := sha256.Sum256(unsafe.Slice(unsafe.StringData(secret), len(secret)))
	var (
		hash string
		k    *podium.APIKey
		ok   bool
	)
	e.keys.mu.RLock()
	admin := subtle.ConstantTimeCompare(h[:], e.keys.admin[:]) == 1
	if !admin { // the admin's requests need no hex string (one allocation each)
		hash = hex.EncodeToString(h[:])
		k, ok = e.keys.byHash[hash]
	}
	e.keys.mu.RUnlock()
	if admin {
		return AdminKey, true
	}
	if ok {
		return k, true
	}
	return e.life.authenticate(hash) // a player session (module.go)
}

// CreateKey stores a new scoped key (already normalized) and returns it
// with its secret, which is shown only this once.
func (e *Engine) CreateKey(ctx context.Context, k *podium.APIKey) (podium.APIKey, string, error) {
	if err := e.writeRefusal(); err != nil {
		return podium.APIKey{}, "", err
	}
	secret := NewSecret()
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return podium.APIKey{}, "", err
	}
	k.ID = "key_" + hex.EncodeToString(id[:])
	k.Hash = HashSecret(secret)
	k.CreatedAt = e.now().UTC().Truncate(1e6)
	if err := e.store.PutKey(ctx, k); err != nil {
		return podium.APIKey{}, "", e.storeFailed("put key", err)
	}
	e.keys.put(k)
	e.sh.changed()
	return *k, secret, nil
}

// put adds or replaces a key.
func (kr *keyring) put(k *podium.APIKey) {
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
func (kr *keyring) ids() []string {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	out := make([]string, 0, len(kr.byHash))
	for _, k := range kr.byHash {
		out = append(out, k.ID)
	}
	return out
}

// remove forgets the key with an id (revoked).
func (kr *keyring) remove(id string) {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	for h, k := range kr.byHash {
		if k.ID == id {
			delete(kr.byHash, h)
		}
	}
}

// ListKeys returns every scoped key (without secrets), oldest first.
func (e *Engine) ListKeys(ctx context.Context) ([]podium.APIKey, error) {
	return e.store.Keys(ctx)
}

// DeleteKey revokes a key at once. A missing key is ECodeNotFound.
func (e *Engine) DeleteKey(ctx context.Context, id string) error {
	if err := e.writeRefusal(); err != nil {
		return err
	}
	if err := e.store.DeleteKey(ctx, id); err != nil {
		return e.storeFailed("delete key", err)
	}
	e.revokeKey(id)
	e.sh.changed(id)
	return nil
}

// revokeKey forgets a revoked key, then ends what it opened: after the
// keyring forgot it nothing can authenticate with the key again, and the
// live streams that did are closed.
func (e *Engine) revokeKey(id string) {
	e.keys.remove(id)
	if e.listener != nil {
		e.listener.KeyRevoked(id)
	}
}
