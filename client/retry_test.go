package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// fault is what the faulty front does with one attempt.
type fault int

const (
	pass         fault = iota // hand the request to podium
	applyAndDrop              // hand it to podium, then cut the connection: the answer is lost
	drop                      // cut the connection before podium sees it
	unavailable               // 503 unavailable, Retry-After: 0
	unknown                   // 503 outcome_unknown (podium sees nothing)
	limited                   // 429 rate_limited, Retry-After: 1
	limitedLong               // 429 rate_limited, Retry-After: 120
)

// faults is a front of a real server that makes the requests to one route
// fail by a script, and records the Idempotency-Key of every attempt.
type faults struct {
	mu     sync.Mutex
	route  string  // "METHOD /path"
	script []fault // by attempt; past its end: pass
	keys   []string
}

func (f *faults) set(route string, script ...fault) {
	f.mu.Lock()
	f.route, f.script, f.keys = route, script, nil
	f.mu.Unlock()
}

func (f *faults) attempts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...)
}

func (f *faults) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		act := pass
		if r.Method+" "+r.URL.Path == f.route {
			if n := len(f.keys); n < len(f.script) {
				act = f.script[n]
			}
			f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
		}
		f.mu.Unlock()
		errJSON := func(status int, ra, code string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", ra)
			w.WriteHeader(status)
			w.Write([]byte(`{"error":{"code":"` + code + `","message":"injected"}}`))
		}
		switch act {
		case pass:
			h.ServeHTTP(w, r)
		case applyAndDrop:
			h.ServeHTTP(httptest.NewRecorder(), r)
			hijackClose(w)
		case drop:
			hijackClose(w)
		case unavailable:
			errJSON(503, "0", "unavailable")
		case unknown:
			errJSON(503, "0", "outcome_unknown")
		case limited:
			errJSON(429, "1", "rate_limited")
		case limitedLong:
			errJSON(429, "120", "rate_limited")
		}
	})
}

func hijackClose(w http.ResponseWriter) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	c.Close()
}

var fastRetry = client.RetryPolicy{MaxAttempts: 4, MinDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}

func retryServer(t *testing.T) (*faults, *client.Client) {
	f := &faults{}
	srv := newTestServer(t, f.wrap)
	c := client.New(srv.URL, client.WithKey(adminKey), client.WithRetry(fastRetry))
	if _, _, err := c.PutBoard(ctxT(t), "sum", client.BoardSpec{Keys: []client.RankKey{{Name: "pts", Order: "desc"}}, Mode: "sum"}); err != nil {
		t.Fatal(err)
	}
	return f, c
}

// sameKey checks that every attempt carried one non-empty key.
func sameKey(t *testing.T, keys []string, n int) {
	t.Helper()
	if len(keys) != n {
		t.Fatalf("%d attempts, want %d", len(keys), n)
	}
	for _, k := range keys {
		if k == "" || k != keys[0] {
			t.Fatalf("Idempotency-Keys of the attempts: %q", keys)
		}
	}
}

func points(t *testing.T, c *client.Client, player string) int64 {
	t.Helper()
	e, err := c.Entry(ctxT(t), "sum", player, client.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e.Entry.Keys[0]
}

// A submission whose answer is lost, then refused with 503, is retried
// with the same Idempotency-Key and applied once: on a sum board, twice
// would show.
func TestRetrySubmitAppliesOnce(t *testing.T) {
	f, c := retryServer(t)
	ctx := ctxT(t)
	f.set("POST /v1/boards/sum/scores", applyAndDrop, unavailable, unknown)
	res, err := c.Submit(ctx, "sum", client.Score{Player: "alice", Score: score(5)})
	if err != nil {
		t.Fatal(err)
	}
	sameKey(t, f.attempts(), 4)
	if !res.Replayed || res.Entry.Keys[0] != 5 {
		t.Fatalf("answer after retries: %+v", res)
	}
	if got := points(t, c, "alice"); got != 5 {
		t.Fatalf("alice has %d points after one submission of 5", got)
	}
	// Each call has a key of its own.
	first := f.attempts()[0]
	f.set("POST /v1/boards/sum/scores")
	must(c.Submit(ctx, "sum", client.Score{Player: "alice", Score: score(5)}))
	if k := f.attempts(); len(k) != 1 || k[0] == first || k[0] == "" {
		t.Fatalf("the second call's key %q (first %q)", k, first)
	}
	if got := points(t, c, "alice"); got != 10 {
		t.Fatalf("alice has %d points after two submissions of 5", got)
	}
}

func TestRetryBatchAppliesOnce(t *testing.T) {
	f, c := retryServer(t)
	f.set("POST /v1/scores", applyAndDrop, drop)
	res, err := c.SubmitBatch(ctxT(t), []client.Score{{Board: "sum", Player: "bob", Score: score(7)}, {Board: "sum", Player: "amy", Score: score(1)}},
		client.WriteOptions{IdempotencyKey: "batch-1"})
	if err != nil {
		t.Fatal(err)
	}
	keys := f.attempts()
	sameKey(t, keys, 3)
	if keys[0] != "batch-1" || len(res) != 2 || !res[0].Replayed {
		t.Fatalf("keys %q, results %+v", keys, res)
	}
	if got := points(t, c, "bob"); got != 7 {
		t.Fatalf("bob has %d points after one submission of 7", got)
	}
}

// 429 is retried after its Retry-After.
func TestRetryHonoursRetryAfter(t *testing.T) {
	f, c := retryServer(t)
	f.set("POST /v1/boards/sum/scores", limited)
	t0 := time.Now()
	must(c.Submit(ctxT(t), "sum", client.Score{Player: "alice", Score: score(1)}))
	if d := time.Since(t0); d < time.Second {
		t.Fatalf("retried after %s, before Retry-After: 1", d)
	}
	sameKey(t, f.attempts(), 2)

	// A Retry-After past the policy's bound is not waited for.
	f.set("POST /v1/boards/sum/scores", limitedLong)
	_, err := c.Submit(ctxT(t), "sum", client.Score{Player: "alice", Score: score(1)})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 429 || e.RetryAfter != 120*time.Second || len(f.attempts()) != 1 {
		t.Fatalf("Retry-After 120: %v after %d attempts", err, len(f.attempts()))
	}
	// Nor one past the context's deadline.
	f.set("POST /v1/boards/sum/scores", limited)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.Submit(ctx, "sum", client.Score{Player: "alice", Score: score(1)}); !client.IsRateLimited(err) || len(f.attempts()) != 1 {
		t.Fatalf("Retry-After past the deadline: %v after %d attempts", err, len(f.attempts()))
	}
	if got := points(t, c, "alice"); got != 1 {
		t.Fatalf("alice has %d points, want 1", got)
	}
}

// Retries stop at MaxAttempts, and a 4xx other than 429 is never retried.
func TestRetryLimits(t *testing.T) {
	f, c := retryServer(t)
	ctx := ctxT(t)
	f.set("POST /v1/boards/sum/scores", unavailable, unavailable, unavailable, unavailable, unavailable)
	if _, err := c.Submit(ctx, "sum", client.Score{Player: "alice", Score: score(1)}); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("after 4 refusals: %v", err)
	}
	sameKey(t, f.attempts(), 4)

	f.set("POST /v1/boards/sum/scores")
	if _, err := c.Submit(ctx, "sum", client.Score{Player: "alice", Keys: []int64{1, 2}}); !errors.Is(err, client.ErrInvalid) || len(f.attempts()) != 1 {
		t.Fatalf("400: %v after %d attempts", err, len(f.attempts()))
	}
	f.set("GET /v1/boards/nope")
	if _, err := c.GetBoard(ctx, "nope"); !client.IsNotFound(err) || len(f.attempts()) != 1 {
		t.Fatalf("404: %v after %d attempts", err, len(f.attempts()))
	}
	// NoRetry sends once.
	f.set("GET /v1/boards/sum", unavailable)
	if _, err := client.New(c.BaseURL(), client.WithKey(adminKey), client.WithRetry(client.NoRetry)).GetBoard(ctx, "sum"); !errors.Is(err, client.ErrUnavailable) || len(f.attempts()) != 1 {
		t.Fatalf("NoRetry: %v after %d attempts", err, len(f.attempts()))
	}
}

// Reads retry on network errors and 503; writes that a repetition would
// apply again (a new API key) retry only when nothing was applied.
func TestRetryReadsAndUnsafeWrites(t *testing.T) {
	f, c := retryServer(t)
	ctx := ctxT(t)
	f.set("GET /v1/boards/sum", drop, unavailable)
	if b, err := c.GetBoard(ctx, "sum"); err != nil || b.ID != "sum" || len(f.attempts()) != 3 {
		t.Fatalf("GetBoard: %v after %d attempts", err, len(f.attempts()))
	}
	if k := f.attempts(); k[0] != "" {
		t.Fatalf("a read carried Idempotency-Key %q", k[0])
	}

	f.set("POST /v1/keys", applyAndDrop)
	if _, err := c.CreateKey(ctx, client.APIKeySpec{Name: "k", Scopes: []string{"read"}}); err == nil || client.StatusOf(err) != 0 || len(f.attempts()) != 1 {
		t.Fatalf("CreateKey after a lost answer: %v after %d attempts (want the network error, no retry)", err, len(f.attempts()))
	}
	f.set("POST /v1/keys", unavailable)
	if k, err := c.CreateKey(ctx, client.APIKeySpec{Name: "k2", Scopes: []string{"read"}}); err != nil || k.Key == "" || len(f.attempts()) != 2 {
		t.Fatalf("CreateKey after a 503: %v after %d attempts", err, len(f.attempts()))
	}
	f.set("POST /v1/keys", unknown)
	if _, err := c.CreateKey(ctx, client.APIKeySpec{Name: "k3", Scopes: []string{"read"}}); !errors.Is(err, client.ErrOutcomeUnknown) || len(f.attempts()) != 1 {
		t.Fatalf("CreateKey after outcome_unknown: %v after %d attempts", err, len(f.attempts()))
	}
	if keys := must(c.ListKeys(ctx)); len(keys) != 2 {
		t.Fatalf("%d keys, want the one whose answer was lost and k2", len(keys))
	}
}

// Do reaches endpoints without a method of their own, with the retries of
// their kind.
func TestDo(t *testing.T) {
	f, c := retryServer(t)
	ctx := ctxT(t)
	var page client.Page
	f.set("GET /v1/boards/sum/entries", drop)
	if err := c.Do(ctx, http.MethodGet, "/v1/boards/sum/entries", url.Values{"limit": {"5"}}, nil, &page, ""); err != nil || page.Board != "sum" || len(f.attempts()) != 2 {
		t.Fatalf("Do GET: %v %+v after %d attempts", err, page, len(f.attempts()))
	}
	var res client.Submitted
	f.set("POST /v1/boards/sum/scores", applyAndDrop)
	body := client.Score{Player: "zed", Score: score(3)}
	if err := c.Do(ctx, http.MethodPost, "/v1/boards/sum/scores", nil, body, &res, "do-1"); err != nil || res.Entry.Keys[0] != 3 {
		t.Fatalf("Do POST with a key: %v %+v", err, res)
	}
	sameKey(t, f.attempts(), 2)
	f.set("POST /v1/boards/sum/scores", applyAndDrop)
	if err := c.Do(ctx, http.MethodPost, "/v1/boards/sum/scores", nil, body, &res, ""); err == nil || len(f.attempts()) != 1 {
		t.Fatalf("Do POST without a key after a lost answer: %v after %d attempts", err, len(f.attempts()))
	}
	if got := points(t, c, "zed"); got != 6 {
		t.Fatalf("zed has %d points, want 6 (3 once with the key, 3 once without)", got)
	}
	if err := c.Do(ctx, http.MethodGet, "/v1/nope", nil, nil, nil, ""); !client.IsNotFound(err) {
		t.Fatalf("Do of an unknown route: %v", err)
	}
}
