package http

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestPageCacheBudget: the cache stays within its byte budget, the oldest
// page going first, and refuses pages over maxCachedPage.
func TestPageCacheBudget(t *testing.T) {
	c := newPageCache(prometheus.NewRegistry(), 1000)
	page := cachedPage{body: make([]byte, 300)}
	for _, k := range []string{"a", "b", "c", "d"} {
		c.put(k, page)
		if c.bytes > c.budget {
			t.Fatalf("after %s: %d bytes over a budget of %d", k, c.bytes, c.budget)
		}
	}
	if _, ok := c.get([]byte("a")); ok {
		t.Fatal("the oldest page outlived the budget")
	}
	for _, k := range []string{"b", "c", "d"} {
		if _, ok := c.get([]byte(k)); !ok {
			t.Fatalf("page %s was dropped while within the budget", k)
		}
	}
	big := newPageCache(prometheus.NewRegistry(), 10*maxCachedPage)
	big.put("huge", cachedPage{body: make([]byte, maxCachedPage+1)})
	if _, ok := big.get([]byte("huge")); ok || big.bytes != 0 {
		t.Fatal("a page over maxCachedPage was cached")
	}
}
