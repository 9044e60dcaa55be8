package http_test

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// metric reads one sample of the server's /metrics.
func (s *server) metric(name string) float64 {
	s.t.Helper()
	body := string(s.must(200, s.do("GET", "/metrics", "", nil)).body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		s.t.Fatalf("no %s in /metrics", name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestPageCache: readers of an unchanged page share one encoding; a
// change is never served stale; the cached bytes equal a fresh encoding.
func TestPageCache(t *testing.T) {
	s := newServer(t)
	s.mkBoard("c", `{"keys":[{"name":"score","order":"desc"}],"public":true}`)
	for i := range 50 {
		s.must(200, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p`+strconv.Itoa(i)+`","score":`+strconv.Itoa(i)+`}`))
	}
	miss0, hit0 := s.metric("podium_page_cache_misses_total"), s.metric("podium_page_cache_hits_total")
	var wg sync.WaitGroup
	bodies := make([]string, 32)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies[i] = string(s.must(200, s.do("GET", "/v1/boards/c/entries?limit=10", "", nil)).body)
		}()
	}
	wg.Wait()
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Fatalf("readers of one page got different answers:\n%s\n%s", b, bodies[0])
		}
	}
	if miss, hit := s.metric("podium_page_cache_misses_total")-miss0, s.metric("podium_page_cache_hits_total")-hit0; miss != 1 || hit > 31 {
		t.Fatalf("32 readers of one unchanged page: %v encodings (want 1), %v hits", miss, hit)
	}
	if !strings.Contains(bodies[0], `"player":"p49"`) {
		t.Fatalf("page: %s", bodies[0])
	}
	// Another URL is another page; a new score is never served stale.
	if b := string(s.must(200, s.do("GET", "/v1/boards/c/entries?limit=10&offset=1", "", nil)).body); b == bodies[0] || strings.Contains(b, `"player":"p49"`) {
		t.Fatalf("offset 1 answered like offset 0: %s", b)
	}
	s.must(200, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"top","score":1000}`))
	if b := string(s.must(200, s.do("GET", "/v1/boards/c/entries?limit=10", "", nil)).body); !strings.Contains(b, `"rank":1,"player":"top"`) {
		t.Fatalf("after a new #1: %s", b)
	}
	// The cached bytes are what a fresh encoding gives: the same page
	// read through players= (never cached) has the same entries.
	page := string(s.must(200, s.do("GET", "/v1/boards/c/entries?limit=2", "", nil)).body)
	byPlayers := string(s.must(200, s.do("GET", "/v1/boards/c/entries?players=top,p49", "", nil)).body)
	if page != byPlayers {
		t.Fatalf("cached page and players= read differ:\n%s\n%s", page, byPlayers)
	}
}
