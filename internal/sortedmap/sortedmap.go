// Package sortedmap is an ordered map from strings to values, for walking
// a large set of ids in order from any point (the board list's pages)
// without sorting it on each walk, and without copying the whole set on an
// insert.
//
// The keys are kept in chunks of at most MaxChunk sorted keys; the chunks
// are in key order, so a lookup is a binary search over the chunks' last
// keys, then one within the chunk. An insert or delete moves at most one
// chunk's keys (plus, when a chunk splits or is merged away, the chunk
// directory: n/MaxChunk*2 slice headers, 1 in MaxChunk/2 inserts at most).
// A chunk that falls under MaxChunk/4 merges with a neighbour when they fit
// in one, so deletes never leave a directory of near-empty chunks.
//
// A Map is not safe for concurrent use.
package sortedmap

import (
	"slices"
	"strings"
)

// MaxChunk is the most keys one chunk holds; a chunk over it splits in two.
const MaxChunk = 512

type chunk[V any] struct {
	keys []string
	vals []V
}

// Map is an ordered map. The zero value is an empty map.
type Map[V any] struct {
	chunks []*chunk[V]
	n      int
}

// Len returns the number of keys.
func (m *Map[V]) Len() int { return m.n }

// find returns the index of the chunk that holds key, or would: the first
// whose last key is >= key, or the last chunk.
func (m *Map[V]) find(key string) int {
	i, _ := slices.BinarySearchFunc(m.chunks, key, func(c *chunk[V], k string) int {
		return strings.Compare(c.keys[len(c.keys)-1], k)
	})
	return min(i, len(m.chunks)-1)
}

// Get returns the value of key.
func (m *Map[V]) Get(key string) (V, bool) {
	var zero V
	if m.n == 0 {
		return zero, false
	}
	c := m.chunks[m.find(key)]
	if j, ok := slices.BinarySearch(c.keys, key); ok {
		return c.vals[j], true
	}
	return zero, false
}

// Set sets the value of key, inserting it if new.
func (m *Map[V]) Set(key string, v V) {
	if m.n == 0 {
		m.chunks = []*chunk[V]{{keys: []string{key}, vals: []V{v}}}
		m.n = 1
		return
	}
	i := m.find(key)
	c := m.chunks[i]
	j, ok := slices.BinarySearch(c.keys, key)
	if ok {
		c.vals[j] = v
		return
	}
	c.keys = slices.Insert(c.keys, j, key)
	c.vals = slices.Insert(c.vals, j, v)
	m.n++
	if len(c.keys) > MaxChunk {
		h := len(c.keys) / 2
		right := &chunk[V]{keys: slices.Clone(c.keys[h:]), vals: slices.Clone(c.vals[h:])}
		clear(c.keys[h:]) // drop the references the left half no longer uses
		clear(c.vals[h:])
		c.keys, c.vals = c.keys[:h:h], c.vals[:h:h]
		m.chunks = slices.Insert(m.chunks, i+1, right)
	}
}

// Delete removes key and reports whether it was there.
func (m *Map[V]) Delete(key string) bool {
	if m.n == 0 {
		return false
	}
	i := m.find(key)
	c := m.chunks[i]
	j, ok := slices.BinarySearch(c.keys, key)
	if !ok {
		return false
	}
	c.keys = slices.Delete(c.keys, j, j+1)
	c.vals = slices.Delete(c.vals, j, j+1)
	m.n--
	switch {
	case len(c.keys) == 0:
		m.chunks = slices.Delete(m.chunks, i, i+1)
	case len(c.keys) < MaxChunk/4:
		// Merge into the smaller neighbour when the two fit in one chunk.
		k := -1
		if i > 0 {
			k = i - 1
		}
		if i+1 < len(m.chunks) && (k < 0 || len(m.chunks[i+1].keys) < len(m.chunks[k].keys)) {
			k = i + 1
		}
		if k < 0 || len(m.chunks[k].keys)+len(c.keys) > MaxChunk {
			break
		}
		lo, hi := min(i, k), max(i, k)
		a, b := m.chunks[lo], m.chunks[hi]
		a.keys = append(a.keys, b.keys...)
		a.vals = append(a.vals, b.vals...)
		m.chunks = slices.Delete(m.chunks, hi, hi+1)
	}
	return true
}

// Ascend calls fn for each key in order until fn returns false. The map
// must not change during the walk.
func (m *Map[V]) Ascend(fn func(key string, v V) bool) { m.walk(0, 0, fn) }

// AscendAfter calls fn for each key greater than after, in order, until fn
// returns false. The map must not change during the walk.
func (m *Map[V]) AscendAfter(after string, fn func(key string, v V) bool) {
	if m.n == 0 {
		return
	}
	i := m.find(after)
	j, ok := slices.BinarySearch(m.chunks[i].keys, after)
	if ok {
		j++
	}
	m.walk(i, j, fn)
}

func (m *Map[V]) walk(i, j int, fn func(key string, v V) bool) {
	for ; i < len(m.chunks); i, j = i+1, 0 {
		c := m.chunks[i]
		for ; j < len(c.keys); j++ {
			if !fn(c.keys[j], c.vals[j]) {
				return
			}
		}
	}
}
