package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

// killReceiver is a game's webhook receiver for the kill -9 tests. It
// answers 500 to the first attempt, holds the second (the node is then
// mid-retry, its request in flight) until the node dies, and, once the
// test calls accept, answers 200 and handles each event once, as a
// receiver that deduplicates by webhook-id does.
type killReceiver struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	secret   string
	accept   bool
	attempts int            // before accept
	hits     map[string]int // every request, by webhook-id
	handled  []string       // the events handled, in order, each once
	held     chan string    // the id of the held attempt
}

func newKillReceiver(t *testing.T) *killReceiver {
	k := &killReceiver{t: t, hits: map[string]int{}, held: make(chan string, 1)}
	k.srv = httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *killReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	id := r.Header.Get("webhook-id")
	k.mu.Lock()
	if err := webhooks.Verify(k.secret, id, r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, time.Now(), 0); err != nil {
		k.mu.Unlock()
		k.t.Errorf("delivery %s: %v", id, err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	k.hits[id]++
	if !k.accept {
		k.attempts++
		n := k.attempts
		k.mu.Unlock()
		if n == 2 {
			k.held <- id
			<-r.Context().Done() // until the node is killed (or the server closes)
		}
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if !slices.Contains(k.handled, id) {
		k.handled = append(k.handled, id)
	}
	k.mu.Unlock()
}

// setSecret and startAccepting change what the receiver does; handledIDs
// and hitsOf read what it saw.
func (k *killReceiver) setSecret(s string) { k.mu.Lock(); k.secret = s; k.mu.Unlock() }
func (k *killReceiver) startAccepting()    { k.mu.Lock(); k.accept = true; k.mu.Unlock() }
func (k *killReceiver) handledIDs() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.handled)
}
func (k *killReceiver) hitsOf(id string) int { k.mu.Lock(); defer k.mu.Unlock(); return k.hits[id] }

// waitHeld waits for the receiver to hold an attempt and returns its id.
func (k *killReceiver) waitHeld(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case id := <-k.held:
		return id
	case <-time.After(within):
		t.Fatalf("no retry reached the receiver within %s", within)
	}
	return ""
}

// whCall sends an admin request with key to base and decodes the answer.
func whCall(t *testing.T, base, key, method, path, body string, want int) map[string]any {
	t.Helper()
	code, b, _ := do(base, method, path, key, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return out
}

// whEndpoint registers the receiver for leader.changed and board.created
// and returns the endpoint's id.
func whEndpoint(t *testing.T, base, key string, k *killReceiver) string {
	t.Helper()
	ep := whCall(t, base, key, "POST", "/v1/webhooks",
		fmt.Sprintf(`{"url":%q,"types":["leader.changed","board.created"]}`, k.srv.URL), http.StatusCreated)
	k.setSecret(ep["secret"].(string))
	return ep["id"].(string)
}

// whLog returns the endpoint's delivery log as "id status" in event seq
// order (the API lists the newest first).
func whLog(t *testing.T, base, key, ep string) (ids, statuses []string) {
	t.Helper()
	out := whCall(t, base, key, "GET", "/v1/webhooks/"+ep+"/deliveries?limit=100", "", http.StatusOK)
	ds := out["deliveries"].([]any)
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i].(map[string]any)
		ids = append(ids, d["event"].(map[string]any)["id"].(string))
		statuses = append(statuses, d["status"].(string))
	}
	return ids, statuses
}

// checkDeliveredOnce waits until the receiver has handled every event of
// want, in order, and the log says each is delivered.
func checkDeliveredOnce(t *testing.T, base, key, ep string, k *killReceiver, want []string) {
	t.Helper()
	eventually(t, 90*time.Second, "every event delivered after the kill", func() string {
		if got := k.handledIDs(); !slices.Equal(got, want) {
			return fmt.Sprintf("the receiver handled %v, want %v", got, want)
		}
		ids, st := whLog(t, base, key, ep)
		if !slices.Equal(ids, want) || slices.ContainsFunc(st, func(s string) bool { return s != "delivered" }) {
			return fmt.Sprintf("log %v %v", ids, st)
		}
		return ""
	})
}

// kill -9 of the node while it retries a delivery (its attempt in flight):
// restarted, it delivers that event again and then every other event made
// before the kill, in order, and a receiver that deduplicates by
// webhook-id handles each once.
func TestWebhookKilledMidRetry(t *testing.T) {
	const key = "admin-secret"
	dir := t.TempDir()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--webhook-allow-private"}
	env := []string{"PODIUM_ADMIN_KEY=" + key}
	cmd, base := startProcess(t, env, args...)
	k := newKillReceiver(t)
	ep := whEndpoint(t, base, key, k)

	whCall(t, base, key, "PUT", "/v1/boards/b", `{"keys":[{"name":"n","order":"desc"}],"mode":"best","public":true}`, http.StatusCreated)
	for i, p := range []string{"ann", "bea", "cid"} { // each takes #1: a leader.changed each
		whCall(t, base, key, "POST", "/v1/scores", fmt.Sprintf(`{"scores":[{"board":"b","player":%q,"keys":[%d]}]}`, p, 10*(i+1)), http.StatusOK)
	}
	want, _ := whLog(t, base, key, ep)
	if len(want) != 4 {
		t.Fatalf("outbox %v, want board.created and three leader.changed", want)
	}

	held := k.waitHeld(t, 60*time.Second) // 500 first, then the retry, in flight
	if held != want[0] {
		t.Fatalf("the retry is of %s, want the first event %s (order)", held, want[0])
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	k.startAccepting()

	_, base = startProcess(t, env, args...)
	checkDeliveredOnce(t, base, key, ep, k, want)
	if n := k.hitsOf(want[0]); n != 3 {
		t.Errorf("the first event reached the receiver %d times, want 3 (500, the attempt cut by the kill, 200)", n)
	}
}

// On two PostgreSQL nodes: kill -9 of the node that delivers, mid-retry;
// the other node takes the lease over once it expires, and delivers every
// event made before the kill, each handled once.
func TestWebhookKilledNodeCrossPickup(t *testing.T) {
	c := newClusterWith(t, 2, "", func(int, string) []string { return []string{"--webhook-allow-private"} })
	k := newKillReceiver(t)
	base := c.nodes[0].url
	ep := whEndpoint(t, base, clusterKey, k)
	whCall(t, base, clusterKey, "PUT", "/v1/boards/b", `{"keys":[{"name":"n","order":"desc"}],"mode":"best","public":true}`, http.StatusCreated)
	// The writes go to the node the endpoint was made on: another node
	// learns of a new endpoint at its next poll, and writes no event for
	// it before.
	for i, p := range []string{"ann", "bea", "cid", "dee"} { // each takes #1
		whCall(t, base, clusterKey, "POST", "/v1/scores", fmt.Sprintf(`{"scores":[{"board":"b","player":%q,"keys":[%d]}]}`, p, 10*(i+1)), http.StatusOK)
	}
	want, _ := whLog(t, base, clusterKey, ep)
	if len(want) != 5 {
		t.Fatalf("outbox %v, want board.created and four leader.changed", want)
	}

	if held := k.waitHeld(t, 60*time.Second); held != want[0] {
		t.Fatalf("the retry is of %s, want the first event %s (order)", held, want[0])
	}
	// The node that made the attempts counts them.
	var dead int
	eventually(t, 30*time.Second, "the delivering node", func() string {
		var who []int
		for i, nd := range c.nodes {
			if webhookAttempts(t, nd.url, "http_error") > 0 {
				who = append(who, i)
			}
		}
		if len(who) != 1 {
			return fmt.Sprintf("nodes with attempts: %v", who)
		}
		dead = who[0]
		return ""
	})
	other := 1 - dead
	c.kill(dead)
	k.startAccepting()

	checkDeliveredOnce(t, c.nodes[other].url, clusterKey, ep, k, want)
	if n := webhookAttempts(t, c.nodes[other].url, "ok"); n != len(want) {
		t.Errorf("%s made %d successful attempts, want %d (it took the deliveries over)", c.nodes[other].name, n, len(want))
	}
}

// webhookAttempts reads a node's podium_webhook_attempts_total of result.
func webhookAttempts(t *testing.T, base, result string) int {
	t.Helper()
	code, body, _ := do(base, "GET", "/metrics", clusterKey, "")
	if code != http.StatusOK {
		t.Fatalf("metrics of %s: %d", base, code)
	}
	name := `podium_webhook_attempts_total{result="` + result + `"}`
	l := grepMetric(body, name)
	if l == "?" {
		return 0 // not counted yet
	}
	n, err := strconv.ParseFloat(strings.TrimPrefix(l, name+" "), 64)
	if err != nil {
		t.Fatalf("metrics of %s: %q: %v", base, l, err)
	}
	return int(n)
}
