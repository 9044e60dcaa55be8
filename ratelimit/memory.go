package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Memory is a Store in this process: the limiter of a single node, and
// every node's fallback while its shared store fails. Buckets are spread
// over shards, each under its own mutex, so that concurrent requests
// rarely wait for each other. Its size is bounded: a shard holding
// MaxKeys/shards buckets first forgets full buckets, then the oldest it
// finds, so a flood of addresses cannot grow it without bound.
type Memory struct {
	seed   maphash.Seed
	shards [memShards]memShard
	perCap int
}

const memShards = 64

type memShard struct {
	mu    sync.Mutex
	tat   map[string]int64
	takes int // since the last sweep of this shard
}

// NewMemory returns an empty in-memory store holding at most maxKeys
// buckets (default 1,000,000 when maxKeys <= 0; about 100 bytes each).
func NewMemory(maxKeys int) *Memory {
	if maxKeys <= 0 {
		maxKeys = 1_000_000
	}
	m := &Memory{seed: maphash.MakeSeed(), perCap: max(maxKeys/memShards, 1)}
	for i := range m.shards {
		m.shards[i].tat = map[string]int64{}
	}
	return m
}

var (
	_ Store    = (*Memory)(nil)
	_ Refunder = (*Memory)(nil)
)

// Take implements Store; it never fails.
func (m *Memory) Take(_ context.Context, key string, l Limit, cost int, now time.Time) (Result, error) {
	return m.take(key, l, cost, Micros(now)), nil
}

func (m *Memory) take(key string, l Limit, cost int, now int64) Result {
	sh := &m.shards[maphash.String(m.seed, key)%memShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tat := sh.tat[key]
	next, r := Decide(tat, now, l, cost)
	if next != tat {
		if _, ok := sh.tat[key]; !ok && len(sh.tat) >= m.perCap {
			sh.evict(now, m.perCap)
		}
		sh.tat[key] = next
	}
	if sh.takes++; sh.takes >= 1024 {
		sh.takes = 0
		sh.sweep(now, 256)
	}
	return r
}

// Refund implements Refunder; it never fails.
func (m *Memory) Refund(_ context.Context, key string, l Limit, cost int, now time.Time) error {
	sh := &m.shards[maphash.String(m.seed, key)%memShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if tat, ok := sh.tat[key]; ok {
		sh.tat[key] = Refunded(tat, Micros(now), l, cost)
	}
	return nil
}

// sweep forgets at most n full buckets (TAT passed): bounded work on the
// request path, amortised over 1024 takes.
func (sh *memShard) sweep(now int64, n int) {
	for k, t := range sh.tat {
		if n--; n < 0 {
			return
		}
		if t <= now {
			delete(sh.tat, k)
		}
	}
}

// evict makes room in a full shard: full buckets first; if none of the
// first 64 looked at is full, the one with the earliest TAT among them
// (map order is random, so this is a sampled LRU-like choice).
func (sh *memShard) evict(now int64, capacity int) {
	sh.sweep(now, 64)
	if len(sh.tat) < capacity {
		return
	}
	var victim string
	best, n := int64(1<<62), 0
	for k, t := range sh.tat {
		if t < best {
			victim, best = k, t
		}
		if n++; n >= 64 {
			break
		}
	}
	delete(sh.tat, victim)
}

// Len is the number of buckets held, for tests and metrics.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.tat)
		sh.mu.Unlock()
	}
	return n
}
