package engine

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"time"

	"github.com/podiumhq/podium"
)

// Player sessions (podium.Session): bearer tokens that act as one player.
// Like API keys they are held in memory by token hash, so authentication
// is a map lookup; the store is the authority, and in shared mode every
// issue, refresh and revocation travels on the change feed, so each node
// reloads or forgets the session at once. An expired session is refused by
// the clock on every node without waiting for anything; a heap of expiry
// times lets a background loop end its open streams, and a sweep deletes
// expired rows in bounded batches.

// SessionConfig configures player sessions; zero values mean the defaults.
type SessionConfig struct {
	TTL    time.Duration // default podium.DefaultSessionTTL
	MaxTTL time.Duration // the longest a request may ask (default podium.DefaultSessionMaxTTL)
	Cap    int           // sessions per player (default podium.DefaultSessionCap)
	// ExpireEvery is how often expired sessions are forgotten and their
	// streams ended (default 1s; negative: never, tests call
	// ExpireSessions); SweepEvery how often expired rows are deleted
	// (default 1m), SweepBatch rows at a time (default 500).
	ExpireEvery time.Duration
	SweepEvery  time.Duration
	SweepBatch  int
}

func (c *SessionConfig) fill() {
	if c.TTL <= 0 {
		c.TTL = podium.DefaultSessionTTL
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = podium.DefaultSessionMaxTTL
	}
	if c.MaxTTL < c.TTL {
		c.MaxTTL = c.TTL
	}
	if c.Cap <= 0 {
		c.Cap = podium.DefaultSessionCap
	}
	if c.ExpireEvery == 0 {
		c.ExpireEvery = time.Second
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = time.Minute
	}
	if c.SweepBatch <= 0 {
		c.SweepBatch = 500
	}
}

type liveSession struct {
	ses podium.Session
	key *podium.APIKey // the principal requests made with it carry
}

// sessions holds the unexpired sessions this node knows.
type sessions struct {
	cfg   SessionConfig
	store podium.SessionStore // nil: the store has no sessions
	done  chan struct{}       // closed when the loop ends

	mu     sync.RWMutex
	byHash map[string]*liveSession
	byID   map[string]*liveSession
	exp    expiryHeap
}

func newSessions(st podium.Store, cfg SessionConfig) *sessions {
	cfg.fill()
	ss, _ := st.(podium.SessionStore)
	return &sessions{cfg: cfg, store: ss, byHash: map[string]*liveSession{}, byID: map[string]*liveSession{}}
}

var errNoSessions = podium.Errorf(podium.ECodeUnavailable, "this store keeps no player sessions")

// put adds or replaces a session (a refresh replaces its hash).
func (ss *sessions) put(s *podium.Session) {
	ls := &liveSession{ses: *s, key: &podium.APIKey{ID: s.ID, Name: "session " + s.Device, Scopes: []string{},
		Boards: []string{}, CreatedAt: s.CreatedAt, Player: s.Player}}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if old := ss.byID[s.ID]; old != nil {
		delete(ss.byHash, old.ses.Hash)
	}
	ss.byID[s.ID], ss.byHash[s.Hash] = ls, ls
	heap.Push(&ss.exp, expiry{at: s.ExpiresAt, id: s.ID})
}

// remove forgets a session; it reports whether it was held.
func (ss *sessions) remove(id string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ls := ss.byID[id]
	if ls == nil {
		return false
	}
	delete(ss.byID, id)
	delete(ss.byHash, ls.ses.Hash)
	return true
}

func (ss *sessions) ids() []string {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	out := make([]string, 0, len(ss.byID))
	for id := range ss.byID {
		out = append(out, id)
	}
	return out
}

// lookup returns the principal of an unexpired session by token hash.
func (ss *sessions) lookup(hash string, now time.Time) (*podium.APIKey, bool) {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	ls := ss.byHash[hash]
	if ls == nil || !now.Before(ls.ses.ExpiresAt) {
		return nil, false
	}
	return ls.key, true
}

// expired pops the sessions that expired at or before now and forgets
// them, returning their ids.
func (ss *sessions) expired(now time.Time) []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []string
	for ss.exp.Len() > 0 && !now.Before(ss.exp[0].at) {
		x := heap.Pop(&ss.exp).(expiry)
		ls := ss.byID[x.id]
		if ls == nil || !ls.ses.ExpiresAt.Equal(x.at) {
			continue // revoked, or refreshed: a later expiry is queued
		}
		delete(ss.byID, x.id)
		delete(ss.byHash, ls.ses.Hash)
		out = append(out, x.id)
	}
	return out
}

type expiry struct {
	at time.Time
	id string
}

// expiryHeap is a min-heap of expiry times; stale items (a session since
// revoked or refreshed) are skipped when popped.
type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// loadSessions reads the unexpired sessions at start.
func (e *Engine) loadSessions(ctx context.Context) error {
	if e.ses.store == nil {
		return nil
	}
	list, err := e.ses.store.ActiveSessions(ctx, e.now())
	if err != nil {
		return err
	}
	for i := range list {
		e.ses.put(&list[i])
	}
	return nil
}

// resyncSessions reloads every session after missed changes.
func (e *Engine) resyncSessions(ctx context.Context) error {
	if e.ses.store == nil {
		return nil
	}
	list, err := e.ses.store.ActiveSessions(ctx, e.now())
	if err != nil {
		return err
	}
	kept := make(map[string]bool, len(list))
	for i := range list {
		kept[list[i].ID] = true
		e.ses.put(&list[i])
	}
	for _, id := range e.ses.ids() {
		if !kept[id] {
			e.dropSession(id)
		}
	}
	return nil
}

// refreshSession applies a session change from the feed.
func (e *Engine) refreshSession(ctx context.Context, id string) error {
	if e.ses.store == nil {
		return nil
	}
	s, err := e.ses.store.LoadSession(ctx, id)
	if err != nil {
		return err
	}
	if s == nil || !e.now().Before(s.ExpiresAt) {
		e.dropSession(id)
		return nil
	}
	e.ses.put(s)
	return nil
}

// dropSession forgets a session and ends its open streams.
func (e *Engine) dropSession(id string) {
	e.ses.remove(id)
	if e.listener != nil {
		e.listener.KeyRevoked(id)
	}
}

// ExpireSessions forgets the sessions that have expired by the engine's
// clock and ends their streams; the engine calls it every ExpireEvery.
// It returns how many it ended.
func (e *Engine) ExpireSessions() int {
	ids := e.ses.expired(e.now())
	for _, id := range ids {
		if e.listener != nil {
			e.listener.KeyRevoked(id)
		}
	}
	return len(ids)
}

// SweepSessions deletes expired sessions from the store in batches of
// SweepBatch, at most max batches, and returns how many rows went.
func (e *Engine) SweepSessions(ctx context.Context, max int) (int, error) {
	if e.ses.store == nil {
		return 0, nil
	}
	total := 0
	for range max {
		n, err := e.ses.store.SweepSessions(ctx, e.now(), e.ses.cfg.SweepBatch)
		total += n
		if err != nil || n < e.ses.cfg.SweepBatch {
			return total, err
		}
	}
	return total, nil
}

// sessionLoop expires and sweeps sessions until the engine stops.
func (e *Engine) sessionLoop() {
	defer close(e.ses.done)
	var expire <-chan time.Time
	if e.ses.cfg.ExpireEvery > 0 {
		t := time.NewTicker(e.ses.cfg.ExpireEvery)
		defer t.Stop()
		expire = t.C
	}
	sweep := time.NewTicker(e.ses.cfg.SweepEvery)
	defer sweep.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-expire:
			e.ExpireSessions()
		case <-sweep.C:
			// A few batches a tick keep each short; what is left goes at
			// the next tick.
			if _, err := e.SweepSessions(context.Background(), 10); err != nil {
				e.log.Warn("sweep expired player sessions", "err", err)
			}
		}
	}
}

func (e *Engine) startSessions() {
	e.ses.done = make(chan struct{})
	go e.sessionLoop()
}

func (e *Engine) sessionsStopped() {
	if e.ses.done != nil {
		<-e.ses.done
	}
}

// newSessionToken returns a fresh random session token.
func newSessionToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "pds_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// SessionDefaults returns the default and longest TTL and the cap.
func (e *Engine) SessionDefaults() (ttl, maxTTL time.Duration, limit int) {
	return e.ses.cfg.TTL, e.ses.cfg.MaxTTL, e.ses.cfg.Cap
}

// IssueSession signs player in on device for ttl (0: the default) and
// returns the session with its token, which is shown only this once. It
// replaces the player's session on the same device and, past the cap,
// the oldest. marker, if not "", is the hashed Idempotency-Key: a second
// issue under it is ECodeConflict. Bad input is ECodeInvalid.
func (e *Engine) IssueSession(ctx context.Context, player, device string, ttl time.Duration, marker string) (podium.Session, string, error) {
	if err := podium.ValidPlayerID(player); err != nil {
		return podium.Session{}, "", err
	}
	if err := podium.ValidateDevice(device); err != nil {
		return podium.Session{}, "", err
	}
	if ttl == 0 {
		ttl = e.ses.cfg.TTL
	}
	if ttl < podium.MinSessionTTL || ttl > e.ses.cfg.MaxTTL {
		return podium.Session{}, "", podium.Errorf(podium.ECodeInvalid, "ttl must be %s to %s", podium.MinSessionTTL, e.ses.cfg.MaxTTL)
	}
	if err := e.writeRefusal(); err != nil {
		return podium.Session{}, "", err
	}
	if e.ses.store == nil {
		return podium.Session{}, "", errNoSessions
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return podium.Session{}, "", err
	}
	token := newSessionToken()
	now := e.now().UTC().Truncate(time.Millisecond)
	s := podium.Session{ID: "ses_" + hex.EncodeToString(id[:]), Player: player, Device: device, Hash: HashSecret(token),
		TTL: ttl, CreatedAt: now, RefreshedAt: now, ExpiresAt: now.Add(ttl), Marker: marker}
	removed, err := e.ses.store.PutSession(ctx, &s, e.ses.cfg.Cap)
	if err != nil {
		return podium.Session{}, "", e.storeFailed("put session", err)
	}
	e.ses.put(&s)
	for _, id := range removed {
		e.dropSession(id)
	}
	// The sessions the cap evicted are revoked: the notice names them, so
	// that the other nodes refuse them at once, as for RevokeSessions.
	e.changed(removed...)
	return s, token, nil
}

// SessionByMarker returns the session issued under an idempotency marker,
// nil if none.
func (e *Engine) SessionByMarker(ctx context.Context, marker string) (*podium.Session, error) {
	if e.ses.store == nil {
		return nil, errNoSessions
	}
	return e.ses.store.SessionByMarker(ctx, marker)
}

// PlayerSessions lists a player's unexpired sessions, oldest first.
func (e *Engine) PlayerSessions(ctx context.Context, player string) ([]podium.Session, error) {
	if e.ses.store == nil {
		return nil, errNoSessions
	}
	list, err := e.ses.store.PlayerSessions(ctx, player)
	if err != nil {
		return nil, err
	}
	now := e.now()
	out := list[:0]
	for _, s := range list {
		if now.Before(s.ExpiresAt) {
			out = append(out, s)
		}
	}
	return out, nil
}

// RevokeSessions revokes one session of a player (id not "") or all of
// them, at once: its token stops working and its streams end, here and on
// every node. It returns the ids revoked; a missing session is
// ECodeNotFound.
func (e *Engine) RevokeSessions(ctx context.Context, player, id string) ([]string, error) {
	if err := e.writeRefusal(); err != nil {
		return nil, err
	}
	if e.ses.store == nil {
		return nil, errNoSessions
	}
	ids, err := e.ses.store.DeleteSessions(ctx, player, id)
	if err != nil {
		return nil, e.storeFailed("delete sessions", err)
	}
	for _, id := range ids {
		e.dropSession(id)
	}
	if len(ids) > 0 {
		e.changed(ids...)
	}
	return ids, nil
}

// RefreshSession rotates a session's token: the old one stops working at
// once, and the session lives for its TTL again from now. It returns the
// session with its new token. A missing or expired session (or another
// player's) is ECodeNotFound.
func (e *Engine) RefreshSession(ctx context.Context, player, id string) (podium.Session, string, error) {
	if err := e.writeRefusal(); err != nil {
		return podium.Session{}, "", err
	}
	if e.ses.store == nil {
		return podium.Session{}, "", errNoSessions
	}
	s, err := e.ses.store.LoadSession(ctx, id)
	if err != nil {
		return podium.Session{}, "", e.storeFailed("load session", err)
	}
	now := e.now().UTC().Truncate(time.Millisecond)
	if s == nil || s.Player != player || !now.Before(s.ExpiresAt) {
		return podium.Session{}, "", podium.Errorf(podium.ECodeNotFound, "session %q of player %q does not exist", id, player)
	}
	token := newSessionToken()
	ttl := min(s.TTL, e.ses.cfg.MaxTTL)
	s.Hash, s.RefreshedAt, s.ExpiresAt = HashSecret(token), now, now.Add(ttl)
	if err := e.ses.store.RotateSession(ctx, id, s.Hash, s.RefreshedAt, s.ExpiresAt); err != nil {
		return podium.Session{}, "", e.storeFailed("rotate session", err)
	}
	e.ses.put(s)
	e.changed()
	return *s, token, nil
}
