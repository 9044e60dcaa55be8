package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The player sessions' contract (podium.SessionStore):
//   - PutSession stores a session and, in the same transaction, removes the
//     player's session on the same device, then the oldest beyond the cap;
//     it returns the ids removed; a marker already held is ECodeConflict
//     and changes nothing;
//   - ActiveSessions lists the unexpired sessions of every player, hashes
//     included; PlayerSessions one player's, oldest first;
//   - RotateSession replaces the hash and times, ECodeNotFound when gone;
//   - DeleteSessions removes one (ECodeNotFound when missing or another
//     player's) or all of a player's;
//   - SweepSessions deletes at most limit expired sessions;
//   - on a SharedStore every write but the sweep appends a session change
//     per session touched.

func sessionStore(t *testing.T, s podium.Store) podium.SessionStore {
	t.Helper()
	ss, ok := s.(podium.SessionStore)
	if !ok {
		t.Fatalf("%T is not a podium.SessionStore", s)
	}
	return ss
}

func newSession(id, player, device string, createdMS int64) podium.Session {
	return podium.Session{ID: id, Player: player, Device: device, Hash: "h-" + id, TTL: time.Hour,
		CreatedAt: at(createdMS).UTC().Truncate(time.Millisecond), RefreshedAt: at(createdMS).UTC().Truncate(time.Millisecond),
		ExpiresAt: at(createdMS).Add(time.Hour).UTC().Truncate(time.Millisecond)}
}

func sessionIDs(ss []podium.Session) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func testSessions(t *testing.T, open func(*testing.T) podium.Store) {
	st := open(t)
	ss := sessionStore(t, st)
	shared, _ := st.(podium.SharedStore)
	var cursor int64
	if shared != nil {
		var err error
		if cursor, err = shared.LastChange(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wantChanges := func(ids ...string) {
		t.Helper()
		if shared == nil {
			return
		}
		cs, err := shared.Changes(ctx, cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, c := range cs {
			if c.Kind != podium.ChangeSession {
				t.Fatalf("change %+v: kind %q, want session", c, c.Kind)
			}
			got = append(got, c.Key)
			cursor = c.ID
		}
		if len(ids) == 0 {
			ids = []string{}
		}
		if !reflect.DeepEqual(got, ids) {
			t.Fatalf("session changes %v, want %v", got, ids)
		}
	}
	put := func(s podium.Session, max int, wantRemoved ...string) {
		t.Helper()
		removed, err := ss.PutSession(ctx, &s, max)
		if err != nil {
			t.Fatalf("PutSession(%s): %v", s.ID, err)
		}
		if len(wantRemoved) == 0 && len(removed) == 0 {
			removed = nil
		}
		if !reflect.DeepEqual(removed, nilIfEmpty(wantRemoved)) {
			t.Fatalf("PutSession(%s) removed %v, want %v", s.ID, removed, wantRemoved)
		}
		wantChanges(append([]string{s.ID}, wantRemoved...)...)
	}
	a := newSession("ses_a", "alice", "phone", 0)
	a.Marker = "m1"
	put(a, 3)
	got, err := ss.LoadSession(ctx, "ses_a")
	if err != nil || got == nil || !reflect.DeepEqual(*got, a) {
		t.Fatalf("LoadSession = %+v, %v; want %+v", got, err, a)
	}
	if got, err := ss.SessionByMarker(ctx, "m1"); err != nil || got == nil || got.ID != "ses_a" {
		t.Fatalf("SessionByMarker = %+v, %v", got, err)
	}
	if got, err := ss.LoadSession(ctx, "ses_nope"); err != nil || got != nil {
		t.Fatalf("LoadSession(missing) = %+v, %v", got, err)
	}
	// The marker is taken: a conflict, and nothing changes.
	dup := newSession("ses_dup", "alice", "tablet", 1)
	dup.Marker = "m1"
	if _, err := ss.PutSession(ctx, &dup, 3); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("PutSession with a taken marker: %v, want conflict", err)
	}
	wantChanges()
	// The same device replaces; the cap evicts the oldest.
	put(newSession("ses_b", "alice", "tablet", 10), 3)
	put(newSession("ses_c", "alice", "phone", 20), 3, "ses_a")
	put(newSession("ses_d", "alice", "pc", 30), 3)
	put(newSession("ses_e", "alice", "tv", 40), 3, "ses_b")
	put(newSession("ses_x", "bob", "phone", 5), 3)
	list, err := ss.PlayerSessions(ctx, "alice")
	if err != nil || !reflect.DeepEqual(sessionIDs(list), []string{"ses_c", "ses_d", "ses_e"}) {
		t.Fatalf("PlayerSessions(alice) = %v, %v", sessionIDs(list), err)
	}
	// Active at a time after bob's expiry and before alice's.
	act, err := ss.ActiveSessions(ctx, at(5).Add(time.Hour))
	if err != nil || !reflect.DeepEqual(sessionIDs(act), []string{"ses_c", "ses_d", "ses_e"}) {
		t.Fatalf("ActiveSessions = %v, %v", sessionIDs(act), err)
	}
	if act[0].Hash != "h-ses_c" {
		t.Fatalf("ActiveSessions lost the hash: %+v", act[0])
	}
	// Rotation.
	refreshed, expires := at(100).UTC().Truncate(time.Millisecond), at(100).Add(2*time.Hour).UTC().Truncate(time.Millisecond)
	if err := ss.RotateSession(ctx, "ses_c", "h-new", refreshed, expires); err != nil {
		t.Fatal(err)
	}
	wantChanges("ses_c")
	if got, _ := ss.LoadSession(ctx, "ses_c"); got == nil || got.Hash != "h-new" || !got.ExpiresAt.Equal(expires) || !got.RefreshedAt.Equal(refreshed) {
		t.Fatalf("after RotateSession: %+v", got)
	}
	if err := ss.RotateSession(ctx, "ses_nope", "h", refreshed, expires); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("RotateSession(missing): %v", err)
	}
	wantChanges()
	// Deletes: another player's session is not found.
	if _, err := ss.DeleteSessions(ctx, "bob", "ses_c"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("DeleteSessions(bob, ses_c): %v", err)
	}
	wantChanges()
	if ids, err := ss.DeleteSessions(ctx, "alice", "ses_d"); err != nil || !reflect.DeepEqual(ids, []string{"ses_d"}) {
		t.Fatalf("DeleteSessions(alice, ses_d) = %v, %v", ids, err)
	}
	wantChanges("ses_d")
	ids, err := ss.DeleteSessions(ctx, "alice", "")
	if err != nil || len(ids) != 2 {
		t.Fatalf("DeleteSessions(alice) = %v, %v", ids, err)
	}
	wantChanges(ids...)
	if list, _ := ss.PlayerSessions(ctx, "alice"); len(list) != 0 {
		t.Fatalf("alice still has %v", sessionIDs(list))
	}
	// A tie on creation time never evicts the new session.
	put(newSession("ses_t9", "tie", "one", 0), 1)
	put(newSession("ses_t1", "tie", "two", 0), 1, "ses_t9")
	if _, err := ss.DeleteSessions(ctx, "tie", ""); err != nil {
		t.Fatal(err)
	}
	wantChanges("ses_t1")
	// The sweep: bounded, expired only.
	for i, id := range []string{"ses_s1", "ses_s2", "ses_s3"} {
		put(newSession(id, "carol", id, int64(i)), 10)
	}
	if n, err := ss.SweepSessions(ctx, at(1).Add(time.Hour), 1); err != nil || n != 1 {
		t.Fatalf("SweepSessions(limit 1) = %d, %v", n, err)
	}
	if n, err := ss.SweepSessions(ctx, at(1).Add(time.Hour), 10); err != nil || n != 1 { // ses_s2 (bob's expires later)
		t.Fatalf("SweepSessions = %d, %v", n, err)
	}
	wantChanges()
	left, _ := ss.PlayerSessions(ctx, "carol")
	if !reflect.DeepEqual(sessionIDs(left), []string{"ses_s3"}) {
		t.Fatalf("after the sweep carol has %v", sessionIDs(left))
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
