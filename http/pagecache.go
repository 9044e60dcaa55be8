package http

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/podiumhq/podium/engine"
)

// pageCache keeps the encoded bytes of ranking pages by ETag and URL
// (offset, limit, include_hidden, top_percent): the bytes under a tag never change
// (engine/etag.go), so every reader of an unchanged page gets the same
// slice, and a burst of readers after a change encodes the page once
// (singleflight). Memory is bounded by budget bytes, oldest out first;
// tags that moved on are never asked for again and age out.
type pageCache struct {
	budget int64
	flight singleflight.Group

	mu    sync.Mutex
	m     map[string]cachedPage
	order []string // keys, oldest first
	bytes int64

	hits, misses, evictions prometheus.Counter
	size                    prometheus.GaugeFunc
}

// pageCacheBudget bounds the cached pages' bytes (a top-100 page is
// about 12 KB: some 2,700 pages).
const pageCacheBudget = 32 << 20

// maxCachedPage: bigger pages (limit 1000 with large meta) are encoded
// per request rather than crowd out the rest.
const maxCachedPage = 1 << 20

func newPageCache(reg prometheus.Registerer, budget int64) *pageCache {
	c := &pageCache{budget: budget, m: map[string]cachedPage{}}
	c.hits = prometheus.NewCounter(prometheus.CounterOpts{Name: "podium_page_cache_hits_total",
		Help: "Ranking pages answered from the encoded-page cache."})
	c.misses = prometheus.NewCounter(prometheus.CounterOpts{Name: "podium_page_cache_misses_total",
		Help: "Ranking pages encoded because the cache did not hold them (a burst for one page counts once)."})
	c.evictions = prometheus.NewCounter(prometheus.CounterOpts{Name: "podium_page_cache_evictions_total",
		Help: "Pages dropped from the encoded-page cache to keep it within its byte budget."})
	c.size = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "podium_page_cache_bytes",
		Help: "Bytes of encoded pages the cache holds."}, func() float64 {
		c.mu.Lock()
		defer c.mu.Unlock()
		return float64(c.bytes)
	})
	reg.MustRegister(c.hits, c.misses, c.evictions, c.size)
	return c
}

// appendPageKey appends the cache key of a page to b: a hit is looked up
// from a buffer on the stack, so that it allocates nothing.
func appendPageKey(b []byte, tag string, offset, limit int, q *engine.Query) []byte {
	b = append(b, tag...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(offset), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(limit), 10)
	if q.IncludeHidden {
		b = append(b, ",h"...)
	}
	if q.TopPercent > 0 { // another page of the same board state
		b = append(b, ",t"...)
		b = strconv.AppendInt(b, int64(q.TopPercent), 10)
	}
	return b
}

func (c *pageCache) get(key []byte) (cachedPage, bool) {
	c.mu.Lock()
	p, ok := c.m[string(key)]
	c.mu.Unlock()
	return p, ok
}

func (c *pageCache) put(key string, p cachedPage) {
	n := int64(len(p.body) + len(key))
	if len(p.body) > maxCachedPage {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return
	}
	for c.bytes+n > c.budget && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= int64(len(c.m[old].body) + len(old))
		delete(c.m, old)
		c.evictions.Inc()
	}
	c.m[key] = p
	c.order = append(c.order, key)
	c.bytes += n
}

// cachedPage is a page as encoded, with the tag it was read under, and
// its ETag and Content-Length header values made once: a reader of a
// cached page assigns them to its header and allocates nothing for it.
type cachedPage struct {
	body   []byte
	tag    string
	etag   []string // {tag}, nil without a tag; shared: never modified
	length []string // {len(body)}; shared: never modified
}

// withHeaders fills in p's header values.
func (p cachedPage) withHeaders() cachedPage {
	if p.tag != "" {
		p.etag = []string{p.tag}
	}
	p.length = []string{strconv.Itoa(len(p.body))}
	return p
}

// page returns the encoded page of q: from the cache when tag (read
// before) names bytes already encoded, else encoded once for all the
// readers asking for it at the same time, and cached under the tag the
// read saw.
func (c *pageCache) page(tag string, offset, limit int, q engine.Query, encode func() (cachedPage, error)) (cachedPage, error) {
	var kb [128]byte
	key := appendPageKey(kb[:0], tag, offset, limit, &q)
	if p, ok := c.get(key); ok {
		c.hits.Inc()
		return p, nil
	}
	v, err, _ := c.flight.Do(string(key), func() (any, error) {
		c.misses.Inc()
		p, err := encode()
		p = p.withHeaders()
		if err == nil && p.tag != "" {
			c.put(string(appendPageKey(nil, p.tag, offset, limit, &q)), p)
		}
		return p, err
	})
	if err != nil {
		return cachedPage{}, err
	}
	return v.(cachedPage), nil
}
