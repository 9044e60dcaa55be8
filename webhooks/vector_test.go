package webhooks_test

import (
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

// A delivery as podium signs it (a non-ASCII body: the signature is over
// its UTF-8 bytes). clients/csharp's test (WebhookSnippet) and
// clients/typescript's (webhook.test.mjs) check docs/API.md's C# and
// TypeScript snippets against these same values: keep them equal.
const (
	podSecret = "whsec_cG9kaXVtLXdlYmhvb2stdGVzdC12ZWN0b3ItMzItYnk="
	podID     = "evt_4f1c2a9be07d5c31"
	podTS     = 1796230800
	podBody   = `{"id":"evt_4f1c2a9be07d5c31","type":"leader.changed","at":"2026-12-02T17:00:00.000Z","data":{"board":"weekly","leader":{"player":"zoë","rank":1}}}`
	podSig    = "v1,juzK3yxZxJzRL8128R4upbfGe9zY1AVtVtvO/UoNCIE="
)

func TestSnippetVector(t *testing.T) {
	key, err := webhooks.ParseSecret(podSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := webhooks.Sign(key, podID, podTS, []byte(podBody)); got != podSig {
		t.Fatalf("Sign = %s, want %s", got, podSig)
	}
	if err := webhooks.Verify(podSecret, podID, "1796230800", podSig, []byte(podBody), time.Unix(podTS, 0), 0); err != nil {
		t.Fatal(err)
	}
}
