// Package rank is podium's in-memory rank index: an order-statistic set of
// entries for one board period, at most one per player, kept in rank order.
// It answers the rank of a player, the entry at a rank and windows of ranks,
// each over all entries or over visible (non-hidden) ones, in O(log n).
//
// The order compares the keys in turn (each larger-is-better or
// smaller-is-better), then the earlier At, then the smaller Seq. Seq is unique
// within an index, so the order is total and ranks are unique; if a caller
// does reuse a Seq, entries with equal rows keep some order among themselves
// but every count stays exact.
//
// The package does no I/O and is not safe for concurrent use: callers hold a
// lock around every call, reads included.
package rank

// Entry is one ranked item.
type Entry struct {
	Player uint32   // interned player id, must be < 1<<31
	Hidden bool     // hidden players keep their entry but are left out of public rankings
	Keys   [4]int64 // raw key values; only the first n are used (n = number of keys of the index); unused ones are ignored and returned as 0
	At     int64    // unix milliseconds when the entry reached its keys
	Seq    uint64   // submission sequence number, unique within an index
}

// Index is an order-statistic index over entries. The zero value is not
// usable; call New. It is not safe for concurrent use.
type Index struct {
	t impl
}

// impl is the generic tree behind an Index, instantiated per key count so
// that a 1-key index stores 24-byte rows and a 4-key one 48-byte rows.
type impl interface {
	length() int
	nvisible() int
	get(p uint32) (Entry, bool)
	put(e Entry) (Entry, bool)
	del(p uint32) (Entry, bool)
	setHidden(p uint32, hidden bool) bool
	rank(p uint32, all bool) (int, bool)
	ahead(keys *[4]int64, all bool) int
	at(rank int, all bool) (Entry, bool)
	scan(start, n int, all bool, fn func(int, Entry) bool)
	load(es []Entry)
	bytes() int
}

// New returns an empty index with len(desc) keys, 1 to 4; desc[i] true means
// larger is better for key i, false means smaller is better. It panics on any
// other length.
func New(desc []bool) *Index {
	return newShaped(desc, 0, 0)
}

// newShaped is New with explicit node sizes (0 for the default), so tests
// can build deep trees from few entries.
func newShaped(desc []bool, leafCap, fanout int) *Index {
	switch len(desc) {
	case 1:
		return &Index{newTree[[3]int64](desc, leafCap, fanout)}
	case 2:
		return &Index{newTree[[4]int64](desc, leafCap, fanout)}
	case 3:
		return &Index{newTree[[5]int64](desc, leafCap, fanout)}
	case 4:
		return &Index{newTree[[6]int64](desc, leafCap, fanout)}
	}
	panic("rank: an index has 1 to 4 keys")
}

// Len returns the number of entries, hidden ones included.
func (x *Index) Len() int { return x.t.length() }

// Visible returns the number of entries that are not hidden.
func (x *Index) Visible() int { return x.t.nvisible() }

// Get returns the player's entry, and false if it has none.
func (x *Index) Get(player uint32) (Entry, bool) { return x.t.get(player) }

// Put inserts e, or replaces the entry of e.Player, and returns the entry it
// replaced. Keys beyond the index's key count are ignored. It panics if
// e.Player is not below 1<<31 (ids are interned, so that is a caller bug).
func (x *Index) Put(e Entry) (old Entry, existed bool) { return x.t.put(e) }

// Delete removes the player's entry and returns it, and false if it had none.
func (x *Index) Delete(player uint32) (old Entry, ok bool) { return x.t.del(player) }

// SetHidden hides or shows the player's entry, keeping its place in the
// order. It returns false if the player has no entry.
func (x *Index) SetHidden(player uint32, hidden bool) bool { return x.t.setHidden(player, hidden) }

// Rank returns the 1-based rank of the player's entry, and false if it has
// none. all=true counts every entry ahead; all=false counts only visible
// entries ahead, so for a hidden player it is "visible entries ahead + 1",
// where the player would stand if shown.
func (x *Index) Rank(player uint32, all bool) (int, bool) { return x.t.rank(player, all) }

// At returns the entry at 1-based rank among all entries (all=true) or among
// visible ones, and false if rank is out of range.
func (x *Index) At(rank int, all bool) (Entry, bool) { return x.t.at(rank, all) }

// Range visits up to n entries in rank order starting at 1-based rank start
// (among all entries, or among visible ones, skipping hidden ones, when
// all=false), passing each entry's rank in that same numbering; it stops
// early when fn returns false. A start below 1 is taken as 1. It costs
// O(log size + n), plus the hidden entries stepped over when all=false.
// fn must not modify the index.
func (x *Index) Range(start, n int, all bool, fn func(rank int, e Entry) bool) {
	x.t.scan(start, n, all, fn)
}

// Load replaces the whole content with entries, given in any order. A player
// that appears more than once keeps its last entry in the slice. It builds
// the structure bottom-up in O(n log n) (O(n) for input already in rank
// order), which is the startup path; it needs about 32 to 56 bytes per entry
// of temporary memory for the sort. It panics on a player id not below
// 1<<31, before changing anything.
func (x *Index) Load(entries []Entry) { x.t.load(entries) }

// Bytes returns an estimate of the heap bytes the index holds, for metrics.
func (x *Index) Bytes() int { return x.t.bytes() }
