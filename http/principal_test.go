package http_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestSubmitAuthenticatedOnce (issue 19 item 5): a request is authenticated
// once, when it is admitted, and the wrapper, the rate limit and the handler
// all read that principal from the request's context. A key revoked just
// after it admitted a submit does not turn the submit into a 401 half-way
// (it used to be authenticated again by the handler); the next request
// with it is refused.
func TestSubmitAuthenticatedOnce(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	m := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"game","scopes":["submit"]}`)).json(t)
	gk, id := m["key"].(string), m["id"].(string)
	var calls atomic.Int32
	s.srv.SetAfterAuth(func(r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+gk && calls.Add(1) == 1 {
			if err := s.eng.Keys().Delete(context.Background(), id); err != nil {
				t.Error(err)
			}
		}
	})
	s.must(200, s.do("POST", "/v1/boards/b/scores", gk, `{"player":"a","score":1}`))
	if calls.Load() < 2 {
		t.Fatalf("the principal was read %d times in the submit: the test no longer revokes between two reads", calls.Load())
	}
	if r := s.do("POST", "/v1/boards/b/scores", gk, `{"player":"a","score":2}`); r.status != 401 {
		t.Fatalf("submit with the revoked key: %d %s", r.status, r.body)
	}
}
