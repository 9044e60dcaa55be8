package webhooks

import (
	"testing"

	"github.com/podiumhq/podium"
)

// TestFeedType: the early check in Module.Event names the same type as
// fromFeed for every activity kind, so that an event an endpoint takes is
// never dropped before it is built, and a kind fromFeed does not send has
// no type.
func TestFeedType(t *testing.T) {
	for k := podium.FeedKind(0); k < 16; k++ {
		ev := podium.FeedEvent{Board: "b", Kind: k, Player: "p", Keys: []int64{1}}
		typ, _, ok := fromFeed(&ev)
		if got := feedType(k); got != typ || (got != "") != ok {
			t.Fatalf("kind %d: feedType %q, fromFeed %q (%v)", k, got, typ, ok)
		}
	}
}
