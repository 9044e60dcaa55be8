package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/postgres"
)

// A follower that applies a write made on another node has also applied
// every change of a player, board or key committed before that write:
// once a node shows bob's score it shows bob's name, if the name was set
// first (read-your-writes across nodes; CI once saw node b of TestFeedAPI
// serve bob's events before his name).

// hookStore runs a function once, after the next read of the change feed
// once armed: what it commits lands between that read and whatever the
// follower reads next in its round.
type hookStore struct {
	podium.SharedStore
	mu   sync.Mutex
	hook func()
}

func (s *hookStore) arm(fn func()) {
	s.mu.Lock()
	s.hook = fn
	s.mu.Unlock()
}

func (s *hookStore) Changes(ctx context.Context, after int64, limit int) ([]podium.Change, error) {
	cs, err := s.SharedStore.Changes(ctx, after, limit)
	s.mu.Lock()
	fn := s.hook
	s.hook = nil
	s.mu.Unlock()
	if fn != nil {
		fn()
	}
	return cs, err
}

// sqlFillFeed appends $1 changes of players nobody registered to the
// change feed, as metadata writes would.
const sqlFillFeed = `WITH l AS (UPDATE change_lock SET last = last + $1 RETURNING last)
	INSERT INTO changes (id, kind, key) SELECT l.last - $1 + g, 'player', 'nobody' || g FROM l, generate_series(1, $1) g`

// nameOf is the name node n shows for player on board, "" if the player
// has no entry there.
func nameOf(t *testing.T, n *node, board, player string) string {
	t.Helper()
	for _, ev := range top(t, n, board).Entries {
		if ev.Player == player {
			return ev.Name
		}
	}
	return ""
}

func rename(t *testing.T, n *node, player, name string) {
	t.Helper()
	if _, err := n.eng.PutPlayer(bg, &podium.Player{ID: player, Name: name}); err != nil {
		t.Fatal(err)
	}
}

// Another node renames bob and scores for him while node b's follower is
// in a polling round (b has no broker and polls once an hour; a check
// asks for the round), just after it read the change feed: the score
// must wait for the round that reads the name. b read the feed before
// the heads and the log up to its end, applied the score alone, and
// showed bob under his id.
func TestSharedFollowerPollAppliesNameWithScore(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "exp", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(a, "exp", "alice", 1); err != nil {
		t.Fatal(err)
	}
	var hs *hookStore
	b := c.start("b", nodeOpts{noBroker: true, poll: time.Hour, wrap: func(st *postgres.Store) podium.Store {
		hs = &hookStore{SharedStore: st}
		return hs
	}})
	// b is behind on exp, so the round reads exp's log: not past the head
	// it read before the change feed (bob's row would come with it).
	if _, err := submitOn(a, "exp", "alice", 3); err != nil {
		t.Fatal(err)
	}

	hs.arm(func() {
		rename(t, a, "bob", "Bob B.")
		if _, err := submitOn(a, "exp", "bob", 2); err != nil {
			t.Error(err)
		}
	})
	if _, err := b.eng.Checker().Indexes(bg); err != nil {
		t.Fatal(err)
	}
	if got := nameOf(t, b, "exp", "bob"); got != "" && got != "Bob B." {
		t.Fatalf("b shows bob's score under the name %q: the score was applied before the rename committed ahead of it", got)
	}
	// A round that reads both shows both.
	if _, err := b.eng.Checker().Indexes(bg); err != nil {
		t.Fatal(err)
	}
	if got := nameOf(t, b, "exp", "bob"); got != "Bob B." {
		t.Fatalf("after a further round b shows bob as %q, want Bob B.", got)
	}
}

// Node c renames bob and has no broker, so no notice says the change feed
// moved; node a then scores for bob and its notice carries the row. Node b
// (broker, a poll an hour away) applies the row from the notice: it must
// read the change feed in that round too. It did not, and showed bob
// under his id until its next poll.
func TestSharedFollowerNoticeRowsBringTheName(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "exp", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	b := c.start("b", nodeOpts{poll: time.Hour})
	nc := c.start("c", nodeOpts{noBroker: true, poll: time.Hour})
	rename(t, nc, "bob", "Bob B.")
	if _, err := submitOn(a, "exp", "bob", 2); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "b applies a's score for bob", func() bool {
		return nameOf(t, b, "exp", "bob") != ""
	})
	if got := nameOf(t, b, "exp", "bob"); got != "Bob B." {
		t.Fatalf("b shows bob's score under the name %q, want Bob B. (renamed before the score)", got)
	}
}

// Node b is more than a page of the change feed behind (a thousand
// changes of players nobody registered) when another node renames bob and scores for him: the round that
// reads the first page must not apply the score, whose rename is on the
// next page. It did, and b showed bob under his id for a round.
func TestSharedFollowerFeedPageBehind(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "exp", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(a, "exp", "alice", 1); err != nil {
		t.Fatal(err)
	}
	b := c.start("b", nodeOpts{noBroker: true, poll: time.Hour})
	conn, err := pgx.Connect(bg, c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(bg)
	if _, err := conn.Exec(bg, sqlFillFeed, 1000); err != nil { // the follower's page
		t.Fatal(err)
	}
	rename(t, a, "bob", "Bob B.")
	if _, err := submitOn(a, "exp", "bob", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := b.eng.Checker().Indexes(bg); err != nil {
		t.Fatal(err)
	}
	if got := nameOf(t, b, "exp", "bob"); got != "" && got != "Bob B." {
		t.Fatalf("b shows bob's score under the name %q: applied with the first page of the feed, before the rename on the next", got)
	}
	eventually(t, 5*time.Second, "b applies bob's score after the rest of the feed", func() bool {
		return nameOf(t, b, "exp", "bob") != ""
	})
	if got := nameOf(t, b, "exp", "bob"); got != "Bob B." {
		t.Fatalf("b shows bob as %q, want Bob B.", got)
	}
}

// Node b is a page of the change feed behind when another node renames
// bob (no score, so no head moves): the round that read the first page
// must be followed at once by one that reads the rest. The follower woke
// for it but read nothing (no notice had said the feed moved), and the
// name waited for the next poll, an hour away here.
func TestSharedFollowerReadsTheFeedThrough(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	b := c.start("b", nodeOpts{noBroker: true, poll: time.Hour})
	conn, err := pgx.Connect(bg, c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(bg)
	if _, err := conn.Exec(bg, sqlFillFeed, 1000); err != nil {
		t.Fatal(err)
	}
	rename(t, a, "bob", "Bob B.")
	if _, err := b.eng.Checker().Indexes(bg); err != nil { // reads the first page
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "b reads the rest of the feed and bob's name", func() bool {
		p, err := b.eng.Player("bob")
		return err == nil && p.Name == "Bob B."
	})
}
