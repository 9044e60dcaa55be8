package stream

import (
	"sync/atomic"

	"github.com/podiumhq/podium"
)

// memory accounts, in bytes, everything the hub keeps for live streams,
// against one budget:
//
//   - encoded events, each counted once however many hold it (a window's
//     history, its cached snapshot, connection queues, the event a
//     connection is writing), through a reference count;
//   - the windows' decoded states (the entries each window last sent),
//     estimated.
//
// The budget is a bound, not a target: bytes are reserved before they are
// kept (reserve, tryHold), and a reservation that would pass the budget
// fails, so the count never exceeds it, whatever the readers do. What
// gives way, in order: a window keeps no history or cached snapshot (and
// every window drops them at the next round: shed); a new window is
// refused (ECodeRateLimited, 429 with Retry-After); an event that finds no
// room is not queued, and the connection falls behind (resynced at once,
// or ended if even its snapshot finds no room: queue.go, reader.go); a
// window whose new state finds no room keeps its old one and tries again
// at the next round.
//
// On top of the whole budget, every client address has a share
// (Config.MemoryPerAddress): the bytes queued for its connections and
// being written to them, and the states of the windows it opened, all
// counted full (a shared event once per connection that holds it). So no
// single address can take more than its share, however many connections
// and subscriptions it opens; and each connection holds at most
// Config.QueueBytes.
type memory struct {
	budget  int64
	perAddr int64        // an address's share
	used    atomic.Int64 // bytes accounted: never above budget
	peak    atomic.Int64 // the highest used has been
	views   atomic.Int64 // estimated bytes of windows' states (part of used)
	history atomic.Int64 // bytes of events in histories (part of used)
	// pressure: a reservation failed for the budget since the last round
	// (the round then sheds histories and cached snapshots).
	pressure atomic.Bool
	shed     atomic.Uint64 // times histories and cached snapshots were dropped for the budget
	refused  atomic.Uint64 // windows refused for the budget
	deferred atomic.Uint64 // window states held back for the budget
	behind   atomic.Uint64 // connections that fell behind their bound and were resynced
	cut      atomic.Uint64 // connections ended because their snapshot found no room
}

// reserve takes n bytes of the budget; false (and nothing taken) when they
// do not fit.
func (m *memory) reserve(n int64) bool {
	if n <= 0 {
		m.used.Add(n)
		return true
	}
	for {
		u := m.used.Load()
		if u+n > m.budget {
			m.pressure.Store(true)
			return false
		}
		if m.used.CompareAndSwap(u, u+n) {
			for p := m.peak.Load(); u+n > p && !m.peak.CompareAndSwap(p, u+n); p = m.peak.Load() {
			}
			return true
		}
	}
}

// give returns n reserved bytes.
func (m *memory) give(n int64) { m.used.Add(-n) }

// tryHold counts a new holder of ev. The first holder reserves its bytes,
// and fails when they do not fit; later holders cost nothing.
func (m *memory) tryHold(ev *Event) bool {
	for {
		r := ev.refs.Load()
		if r > 0 {
			if ev.refs.CompareAndSwap(r, r+1) {
				return true
			}
			continue
		}
		if !m.reserve(ev.size) {
			return false
		}
		if ev.refs.CompareAndSwap(0, 1) {
			return true
		}
		m.give(ev.size) // another holder came first and counted it
	}
}

// release drops a holder of ev; the last one gives its bytes back.
func (m *memory) release(ev *Event) {
	if ev.refs.Add(-1) == 0 {
		m.give(ev.size)
	}
}

// address is a client address's share of the budget and its count of
// connections (the hub's per-address cap). The hub keeps it while it has
// connections or bytes (windows it opened may outlive its connections).
type address struct {
	key   string
	conns int // under Hub.mu
	// bytes: queued and in-flight bytes of its connections and the states
	// of the windows it opened.
	bytes atomic.Int64
}

// addCapped adds n to v unless that passes limit.
func addCapped(v *atomic.Int64, n, limit int64) bool {
	for {
		x := v.Load()
		if x+n > limit {
			return false
		}
		if v.CompareAndSwap(x, x+n) {
			return true
		}
	}
}

// entryOverhead approximates an Entry's own bytes and its allocations
// besides the strings and keys it holds.
const entryOverhead = 152 + 48

// resultOverhead approximates a kept Result's own bytes and its keys'
// allocation besides the keys and time text.
const resultOverhead = 40 + 16

// viewSize estimates the heap a window's state holds.
func viewSize(v *View) int64 {
	n := int64(256 + 32*len(v.Keys))
	for i := range v.Entries {
		e := &v.Entries[i]
		n += entryOverhead + int64(8*len(e.Keys)+len(e.Player)+len(e.Name)+len(e.AtText)+len(e.Meta)+len(e.Value))
		for _, r := range e.Results {
			n += resultOverhead + int64(8*len(r.Keys)+len(r.AtText))
		}
	}
	for i := range v.Feed {
		f := &v.Feed[i]
		n += entryOverhead + int64(len(f.ID)+len(f.Pos.Board)+len(f.JSON))
	}
	return n
}

// windowEstimate is what a new window of limit entries is expected to
// cost before it is read: its state and one snapshot.
func windowEstimate(limit int) int64 { return int64(limit) * 2 * (entryOverhead + 64) }

// shed drops every window's history and cached snapshot to make room.
// Resumes then start from a snapshot, which is encoded again when someone
// needs it. The caller holds no window's lock.
func (h *Hub) shed() {
	h.mem.shed.Add(1)
	h.mu.Lock()
	list := make([]*window, 0, len(h.windows))
	for _, w := range h.windows {
		list = append(list, w)
	}
	h.mu.Unlock()
	for _, w := range list {
		w.mu.Lock()
		w.clearHistoryLocked()
		w.setSnapLocked(nil)
		w.mu.Unlock()
	}
}

// admitWindow is a first look at whether a new window of limit entries,
// opened from address a, fits the budget and a's share, dropping
// histories first if that makes room; it returns ECodeRateLimited when it
// does not. The window's state is reserved once it is read (newWindow).
func (h *Hub) admitWindow(a *address, limit int) error {
	need := windowEstimate(limit)
	if a.bytes.Load()+need > h.mem.perAddr {
		h.mem.refused.Add(1)
		return errAddressShare
	}
	if h.mem.used.Load()+need <= h.mem.budget {
		return nil
	}
	h.shed()
	if h.mem.used.Load()+need <= h.mem.budget {
		return nil
	}
	h.mem.refused.Add(1)
	return errBudget
}

var (
	errBudget = podium.Errorf(podium.ECodeRateLimited, "live streams are at their memory budget; retry later or use a window that is already open (a common limit such as 10 or 50)")
	// errAddressShare refuses what would take an address past its share.
	errAddressShare = podium.Errorf(podium.ECodeRateLimited, "the live streams of this address hold their share of the memory budget; close some, or use smaller limits")
)

// reserveView reserves n bytes of window state for address a (the
// window's opener): in a's share when capped, always in the budget.
func (h *Hub) reserveView(a *address, n int64, capped bool) bool {
	if capped {
		if !addCapped(&a.bytes, n, h.mem.perAddr) {
			return false
		}
	} else {
		a.bytes.Add(n)
	}
	if !h.mem.reserve(n) {
		a.bytes.Add(-n)
		return false
	}
	h.mem.views.Add(n)
	return true
}

// giveView gives back n bytes of window state reserved for a.
func (h *Hub) giveView(a *address, n int64) {
	a.bytes.Add(-n)
	h.mem.views.Add(-n)
	h.mem.give(n)
}

// Stats is a reading of the hub's gauges and counters.
type Stats struct {
	Connections    int    // open connections
	Subscriptions  int    // subscriptions on them
	Windows        int    // windows held
	HistoryBytes   int64  // bytes of events kept for resume
	MemoryBytes    int64  // everything accounted against the budget
	MemoryBudget   int64  // the budget
	EventsSent     uint64 // events handed to connections
	BytesSent      uint64 // their SSE bytes
	MemoryPeak     int64  // the most ever accounted (never above the budget)
	MemoryPerAddr  int64  // an address's share of the budget
	AddressMax     int64  // the most that one address holds now
	QueuedBytes    int64  // events queued on connections or being written, counted per connection
	Shed           uint64 // times histories and cached snapshots were dropped for the budget
	WindowsRefused uint64 // new windows refused for the budget or an address's share
	// MemoryDeferred counts the rounds in which a window kept its old
	// state because the new one found no room in the budget.
	MemoryDeferred uint64
	// Behind counts the times a connection fell behind its bound (its
	// queue, its address's share or the budget had no room for an event):
	// what was queued was dropped at once, and it is resynced.
	Behind uint64
	// Cut counts the connections ended because even the snapshot of a
	// resync found no room (rate_limited).
	Cut uint64
	// Deferred counts the rounds in which a window held a change back
	// because it was over its rate (Config.OverloadChanges).
	Deferred uint64
}

// Stats returns the hub's gauges and counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	st := Stats{Connections: len(h.conns), Windows: len(h.windows)}
	for _, a := range h.addrs {
		st.AddressMax = max(st.AddressMax, a.bytes.Load())
	}
	for c := range h.conns {
		st.QueuedBytes += c.qBytes.Load()
	}
	h.mu.Unlock()
	st.Subscriptions = int(h.subs.Load())
	st.HistoryBytes = h.mem.history.Load()
	st.MemoryBytes = h.mem.used.Load()
	st.MemoryBudget = h.mem.budget
	st.MemoryPeak = h.mem.peak.Load()
	st.MemoryPerAddr = h.mem.perAddr
	st.MemoryDeferred = h.mem.deferred.Load()
	st.Behind = h.mem.behind.Load()
	st.Cut = h.mem.cut.Load()
	st.EventsSent = h.eventsSent.Load()
	st.BytesSent = h.bytesSent.Load()
	st.Shed = h.mem.shed.Load()
	st.WindowsRefused = h.mem.refused.Load()
	st.Deferred = h.deferred.Load()
	return st
}
