package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

var (
	reader = &podium.APIKey{ID: "key_reader", Scopes: []string{podium.ScopeRead}, Boards: []string{}}
	other  = &podium.APIKey{ID: "key_other", Scopes: []string{podium.ScopeRead}, Boards: []string{"elsewhere:"}}
)

// subscribed connects principal key and subscribes it to board's top 10,
// returning the connection and the first event (a snapshot).
func subscribed(t *testing.T, h *Hub, key *podium.APIKey, board string) *Conn {
	t.Helper()
	c, err := h.Connect("192.0.2.1", key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if _, err := c.Subscribe(context.Background(), board, 10, ""); err != nil {
		t.Fatal(err)
	}
	if evs := drain(c); len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("subscribe sent:\n%s", describe(evs))
	}
	return c
}

// errorCode returns the code of an error event, or fails.
func errorCode(t *testing.T, ev *Event) string {
	t.Helper()
	var m struct{ Type, Code string }
	if err := json.Unmarshal(ev.JSON, &m); err != nil || m.Type != "error" || ev.Type != "error" {
		t.Fatalf("want an error event, got %s %s", ev.Type, ev.JSON)
	}
	return m.Code
}

// mentions reports whether any event carries s (a player id).
func mentions(evs []*Event, s string) bool {
	for _, ev := range evs {
		if strings.Contains(string(ev.JSON), s) {
			return true
		}
	}
	return false
}

// TestVisibilityChangeReauthorises: when a board turns private, every
// subscription is checked again before anything of the private state goes
// out: the anonymous one and the one whose key is for other boards get an
// error and nothing more; the one whose key may read the board goes on.
func TestVisibilityChangeReauthorises(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	src.score("b", "before", 1)
	h, _ := newTestHub(t, src, Config{})
	anon := subscribed(t, h, nil, "b")
	wrong := subscribed(t, h, other, "b")
	ok := subscribed(t, h, reader, "b")

	src.setPublic("b", false)
	h.Applied("b", "all", src.score("b", "secret", 2), nil)
	h.Tick()
	for _, tc := range []struct {
		c    *Conn
		code string
	}{{anon, podium.ECodeBoardNotFound}, {wrong, podium.ECodeBoardNotFound}} {
		evs := drain(tc.c)
		if len(evs) != 1 || errorCode(t, evs[0]) != tc.code {
			t.Fatalf("after the board went private, a reader without access got:\n%swant one %s error", describe(evs), tc.code)
		}
	}
	if evs := drain(ok); len(evs) != 1 || evs[0].Type != "delta" || !mentions(evs, "secret") {
		t.Fatalf("the reader with a key got:\n%s", describe(evs))
	}
	// Later changes reach only the reader with a key.
	h.Applied("b", "all", src.score("b", "secret2", 3), nil)
	h.Tick()
	if evs := append(drain(anon), drain(wrong)...); len(evs) != 0 {
		t.Fatalf("ended subscriptions still get events:\n%s", describe(evs))
	}
	if evs := drain(ok); len(evs) != 1 {
		t.Fatalf("the reader with a key got:\n%s", describe(evs))
	}
	if _, err := anon.Subscribe(context.Background(), "b", 10, ""); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("anonymous subscribe to the private board: %v", err)
	}
}

// TestRecreatedBoardStartsOver: a board deleted and made again between two
// rounds is a new board: the subscription is authorised again (a private
// recreation ends the anonymous one), and a public one starts a new chain
// with a snapshot of the new definition, never a delta of the old chain.
func TestRecreatedBoardStartsOver(t *testing.T) {
	src := newFakeSource()
	src.put("kc", true)
	src.score("kc", "old1", 1)
	src.score("kc", "old2", 2)
	h, _ := newTestHub(t, src, Config{})
	anon := subscribed(t, h, nil, "kc")
	keyed := subscribed(t, h, reader, "kc")
	var first struct {
		SnapshotID uint64 `json:"snapshot_id"`
	}
	h.mu.Lock()
	w := h.windows[windowKey{board: "kc", limit: 10}]
	h.mu.Unlock()
	json.Unmarshal(w.snap.JSON, &first)

	src.remove("kc")
	src.put("kc", false)
	src.mu.Lock()
	src.boards["kc"].def.Title = "two keys"
	src.boards["kc"].def.Keys = []podium.KeyDef{{Name: "a", Order: podium.Desc}, {Name: "b", Order: podium.Asc}}
	src.mu.Unlock()
	for i := 0; i < 6; i++ {
		src.score("kc", "secret", int64(i)) // the seq passes the old one
	}
	h.Applied("kc", "", 0, nil)
	h.Tick()
	if evs := drain(anon); len(evs) != 1 || errorCode(t, evs[0]) != podium.ECodeBoardNotFound {
		t.Fatalf("anonymous reader of a board recreated private got:\n%s", describe(evs))
	}
	evs := drain(keyed)
	if len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("the keyed reader of a recreated board got:\n%swant one snapshot", describe(evs))
	}
	var snap struct {
		Title      string
		Keys       []podium.KeyDef
		SnapshotID uint64 `json:"snapshot_id"`
		Seq        uint64
	}
	json.Unmarshal(evs[0].JSON, &snap)
	if snap.SnapshotID == first.SnapshotID || snap.Title != "two keys" || len(snap.Keys) != 2 || snap.Seq != 6 {
		t.Fatalf("snapshot of the recreated board: %s (old snapshot id %d)", evs[0].JSON, first.SnapshotID)
	}

	// Made again with the very same definition, its seq passing the old
	// one: still a new chain.
	src.remove("kc")
	src.put("kc", false)
	src.mu.Lock()
	src.boards["kc"].def.Title = "two keys"
	src.boards["kc"].def.Keys = []podium.KeyDef{{Name: "a", Order: podium.Desc}, {Name: "b", Order: podium.Asc}}
	src.mu.Unlock()
	for i := 0; i < 8; i++ {
		src.score("kc", "again", int64(i))
	}
	h.Applied("kc", "", 0, nil)
	h.Tick()
	evs = drain(keyed)
	if len(evs) != 1 || evs[0].Type != "snapshot" || evs[0].SnapshotID == snap.SnapshotID {
		t.Fatalf("the keyed reader of a board recreated alike got:\n%swant one snapshot with a new snapshot id", describe(evs))
	}
}

// TestFinalErrorSurvivesFullQueue: a subscription that loses its access
// while its connection's queue is full (being resynced) still gets its
// error, and the resync sends it no snapshot of the private state; the
// connection's other subscriptions get their fresh snapshots.
func TestFinalErrorSurvivesFullQueue(t *testing.T) {
	src := newFakeSource()
	src.put("pub", true)
	src.put("priv", true)
	h, _ := newTestHub(t, src, Config{Queue: 2})
	c, err := h.Connect("192.0.2.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, b := range []string{"pub", "priv"} {
		if _, err := c.Subscribe(context.Background(), b, 10, ""); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ { // nobody reads: the queue overflows
		h.Applied("pub", "all", src.score("pub", "p", int64(i)), nil)
		h.Tick()
	}
	if !c.lagging.Load() {
		t.Fatal("the queue did not overflow")
	}
	src.setPublic("priv", false)
	h.Applied("priv", "all", src.score("priv", "secret", 1), nil)
	h.Tick()
	evs := drain(c)
	if mentions(evs, "secret") {
		t.Fatalf("the private state reached the anonymous reader:\n%s", describe(evs))
	}
	var codes, snaps []string
	for _, ev := range evs {
		switch ev.Type {
		case "error":
			codes = append(codes, errorCode(t, ev))
		case "snapshot":
			var m struct{ Board string }
			json.Unmarshal(ev.JSON, &m)
			snaps = append(snaps, m.Board)
		}
	}
	if len(codes) != 1 || codes[0] != podium.ECodeBoardNotFound || len(snaps) != 1 || snaps[0] != "pub" {
		t.Fatalf("after the resync: errors %v, snapshots of %v; want one board_not_found error and a snapshot of pub", codes, snaps)
	}
}

// TestSubscribeIsAuthorised: subscribing checks the principal against the
// board as the window shows it; a board just made public is looked at
// again before an anonymous reader is refused.
func TestSubscribeIsAuthorised(t *testing.T) {
	src := newFakeSource()
	src.put("p", false)
	h, _ := newTestHub(t, src, Config{})
	subscribed(t, h, reader, "p") // the window exists, private
	for _, tc := range []struct {
		key  *podium.APIKey
		code string
	}{{nil, podium.ECodeBoardNotFound}, {other, podium.ECodeBoardNotFound}} {
		c, _ := h.Connect("192.0.2.2", tc.key)
		if _, err := c.Subscribe(context.Background(), "p", 10, ""); podium.ErrorCode(err) != tc.code {
			t.Fatalf("subscribe as %v: %v, want %s", tc.key, err, tc.code)
		}
		if evs := drain(c); len(evs) != 0 {
			t.Fatalf("a refused subscriber got:\n%s", describe(evs))
		}
		c.Close()
	}
	src.setPublic("p", true)
	h.Applied("p", "", 0, nil) // no round yet
	c, _ := h.Connect("192.0.2.2", nil)
	defer c.Close()
	if _, err := c.Subscribe(context.Background(), "p", 10, ""); err != nil {
		t.Fatalf("anonymous subscribe to a board just made public: %v", err)
	}
}

// TestKeyRevokedEndsConnections: revoking a key ends every connection
// opened with it at once (nothing more is delivered, Err says why), its
// subscribe calls fail, and it cannot connect again; others go on.
func TestKeyRevokedEndsConnections(t *testing.T) {
	src := newFakeSource()
	src.put("b", false)
	h, _ := newTestHub(t, src, Config{})
	victim := subscribed(t, h, reader, "b")
	admin := &podium.APIKey{ID: "admin", Scopes: []string{podium.ScopeAdmin}, Boards: []string{}}
	bystander := subscribed(t, h, admin, "b")

	h.Applied("b", "all", src.score("b", "queued", 1), nil)
	h.Tick() // an event waits in the victim's queue
	h.KeyRevoked(reader.ID)
	if _, ev, ok := victim.Next(0, nil); ok || ev != nil {
		t.Fatalf("a revoked connection delivered an event (ok %v):\n%s", ok, describe([]*Event{ev}))
	}
	if podium.ErrorCode(victim.Err()) != podium.ECodeUnauthenticated {
		t.Fatalf("Err after revocation: %v", victim.Err())
	}
	if _, err := victim.Subscribe(context.Background(), "b", 5, ""); podium.ErrorCode(err) != podium.ECodeUnauthenticated {
		t.Fatalf("subscribe on a revoked connection: %v", err)
	}
	if _, err := h.Connect("192.0.2.1", reader); podium.ErrorCode(err) != podium.ECodeUnauthenticated {
		t.Fatalf("connect with a revoked key: %v", err)
	}
	if evs := drain(bystander); len(evs) != 1 || evs[0].Type != "delta" {
		t.Fatalf("another key's connection got:\n%s", describe(evs))
	}
}

// TestResubscribeAfterEnd: subscribing again to a window whose
// subscription just ended (its error not read yet) makes a new
// subscription, instead of handing back the ended one.
func TestResubscribeAfterEnd(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	h, _ := newTestHub(t, src, Config{})
	c := subscribed(t, h, nil, "b")
	src.setPublic("b", false)
	h.Applied("b", "", 0, nil)
	h.Tick() // ends the subscription; its error waits in the queue
	src.setPublic("b", true)
	h.Applied("b", "", 0, nil)
	if _, err := c.Subscribe(context.Background(), "b", 10, ""); err != nil {
		t.Fatal(err)
	}
	evs := drain(c)
	if len(evs) != 2 || errorCode(t, evs[0]) != podium.ECodeBoardNotFound || evs[1].Type != "snapshot" {
		t.Fatalf("after subscribing again:\n%swant the old subscription's error, then a snapshot", describe(evs))
	}
	h.Applied("b", "all", src.score("b", "p", 1), nil)
	h.Tick()
	if evs := drain(c); len(evs) != 1 || evs[0].Type != "delta" {
		t.Fatalf("the new subscription got:\n%s", describe(evs))
	}
}

// TestRevokedIDsForgotten: the hub remembers revoked ids only for
// revokedKeep, so its memory is bounded by recent revocations (sessions are
// revoked and expire all the time); an id revoked again stays remembered.
func TestRevokedIDsForgotten(t *testing.T) {
	h, clk := newTestHub(t, newFakeSource(), Config{})
	for i := range 1000 {
		h.KeyRevoked(fmt.Sprintf("s%d", i))
	}
	h.KeyRevoked("again")
	clk.Add(revokedKeep / 2)
	h.KeyRevoked("again")
	clk.Add(revokedKeep/2 + time.Second)
	h.KeyRevoked("last")
	h.mu.Lock()
	n, again := len(h.revoked), h.revoked["again"]
	h.mu.Unlock()
	if n != 2 || again.IsZero() {
		t.Fatalf("remembered %d ids (again at %v), want 2: again and last", n, again)
	}
	key := &podium.APIKey{ID: "last", Scopes: []string{podium.ScopeRead}, Boards: []string{}}
	if _, err := h.Connect("192.0.2.1", key); podium.ErrorCode(err) != podium.ECodeUnauthenticated {
		t.Fatalf("connect with a key just revoked: %v", err)
	}
}
