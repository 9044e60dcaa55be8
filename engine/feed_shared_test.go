package engine_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/modules"
)

// feedRecorder is a Listener that records the feed events this node
// stored itself.
type feedRecorder struct {
	mu     sync.Mutex
	boards []string
}

func (r *feedRecorder) Applied(string, string, uint64, []uint32) {}
func (r *feedRecorder) KeyRevoked(string)                        {}
func (r *feedRecorder) FeedAppended(boards []string) {
	r.mu.Lock()
	r.boards = append(r.boards, boards...)
	r.mu.Unlock()
}

func (r *feedRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.boards)
}

func nodeFeed(t *testing.T, n *node, board string) []string {
	t.Helper()
	items, err := feedOf(n.eng).Feed(bg, feed.Read{Board: board, Limit: 200})
	if err != nil {
		t.Fatalf("Feed: %v", err)
	}
	return feedLines(items)
}

// Two nodes on one database serve the same feed: an event committed on one
// is read on the other, which does not derive events of its own from what
// it follows, and each node computes a new #1 against what the other
// committed.
func TestSharedFeed(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	nb, cfg := c.open("b", nodeOpts{})
	rec := &feedRecorder{}
	cfg.Listener = rec
	nb.eng = modules.Engine(cfg)
	if err := nb.eng.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nb.eng.Close() })
	b := newBoard(t, "exp", podium.Best, 1)
	if _, _, err := a.eng.PutBoard(bg, b); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(a, "exp", "alice", 100); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "node b sees node a's events", func() bool {
		_, err := nb.eng.Board("exp")
		return err == nil && len(nodeFeed(t, nb, "exp")) == 2
	})
	// b follows a's commit: its indexes move, and it stores no events.
	eventually(t, 5*time.Second, "node b applies a's submission", func() bool { return len(top(t, nb, "exp").Entries) == 1 })
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("node b stored feed events while following node a: %v", got)
	}
	// b computes its #1 against a's entry (keys are desc: 120 beats 100).
	if _, err := submitOn(nb, "exp", "bob", 120); err != nil {
		t.Fatal(err)
	}
	if got := rec.all(); !slices.Equal(got, []string{"exp"}) {
		t.Fatalf("node b's own commit: FeedAppended %v, want [exp]", got)
	}
	want := []string{
		"exp/1/personal_best all alice(alice) [100] old=[]",
		"exp/1/new_leader all alice(alice) [100] old=[]",
		"exp/2/personal_best all bob(bob) [120] old=[]",
		"exp/2/new_leader all bob(bob) [120] old=[100] from=alice(alice)",
	}
	wantLines(t, "node b's feed", nodeFeed(t, nb, "exp"), want)
	wantLines(t, "node a's feed", nodeFeed(t, a, "exp"), want)
	// A settlement appended on a node takes the board's head in the
	// database as its seq, whatever that node has applied, and shows on
	// the others.
	if err := feedOf(a.eng).AppendFeed(bg, []podium.FeedEvent{{Board: "exp", Kind: podium.FeedTournamentSettled, Player: "bob"}}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "exp/2/tournament_settled all bob(bob) [] old=[]")
	wantLines(t, "node b's feed after a settlement on a", nodeFeed(t, nb, "exp"), want)
	// A node that starts later catches up without emitting anything.
	nc, cfgC := c.open("c", nodeOpts{})
	recC := &feedRecorder{}
	cfgC.Listener = recC
	nc.eng = modules.Engine(cfgC)
	if err := nc.eng.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.eng.Close() })
	wantLines(t, "node c's feed", nodeFeed(t, nc, "exp"), want)
	if got := recC.all(); len(got) != 0 {
		t.Fatalf("a starting node stored feed events: %v", got)
	}
}
