package stream

import (
	"sync/atomic"

	"github.com/podiumhq/podium"
)

// memory accounts, in bytes, everything the hub keeps for live streams,
// against one budget:
//
//   - encoded events, each counted once however many hold it (a window's
//     history, its cached snapshot, connection queues), through a
//     reference count;
//   - the windows' decoded states (the entries each window last sent),
//     estimated.
//
// When the total passes the budget the hub degrades in two steps. First it
// drops what can be rebuilt: every window's history (a client that
// resumes then gets a snapshot) and cached snapshot (encoded again when
// needed), and keeps none while it stays over. Then it refuses to create
// new windows (ECodeRateLimited, 429 with Retry-After). Existing windows
// and subscriptions to them carry on.
type memory struct {
	budget  int64
	events  atomic.Int64  // bytes of encoded events alive
	views   atomic.Int64  // estimated bytes of windows' states
	history atomic.Int64  // bytes of events in histories (part of events)
	shed    atomic.Uint64 // times histories and cached snapshots were dropped for the budget
	refused atomic.Uint64 // windows refused for the budget
}

func (m *memory) used() int64 { return m.events.Load() + m.views.Load() }

func (m *memory) over() bool { return m.used() > m.budget }

// hold counts a new holder of ev; the first one counts its bytes.
func (m *memory) hold(ev *Event) {
	if ev.refs.Add(1) == 1 {
		m.events.Add(ev.size)
	}
}

// release drops a holder of ev; the last one gives its bytes back.
func (m *memory) release(ev *Event) {
	if ev.refs.Add(-1) == 0 {
		m.events.Add(-ev.size)
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

// shed drops every window's history and cached snapshot to get back
// under the budget. Resumes then start from a snapshot, which is encoded
// again when someone needs it.
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

// admitWindow decides whether a new window of limit entries fits the
// budget, dropping histories first if that makes room. It returns
// ECodeRateLimited when it does not fit.
func (h *Hub) admitWindow(limit int) error {
	need := windowEstimate(limit)
	if h.mem.used()+need <= h.mem.budget {
		return nil
	}
	h.shed()
	if h.mem.used()+need <= h.mem.budget {
		return nil
	}
	h.mem.refused.Add(1)
	return podium.Errorf(podium.ECodeRateLimited, "live streams are at their memory budget; retry later or use a window that is already open (a common limit such as 10 or 50)")
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
	Shed           uint64 // times histories and cached snapshots were dropped for the budget
	WindowsRefused uint64 // new windows refused for the budget
	// Deferred counts the rounds in which a window held a change back
	// because it was over its rate (Config.OverloadChanges).
	Deferred uint64
}

// Stats returns the hub's gauges and counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	st := Stats{Connections: len(h.conns), Windows: len(h.windows)}
	h.mu.Unlock()
	st.Subscriptions = int(h.subs.Load())
	st.HistoryBytes = h.mem.history.Load()
	st.MemoryBytes = h.mem.used()
	st.MemoryBudget = h.mem.budget
	st.EventsSent = h.eventsSent.Load()
	st.BytesSent = h.bytesSent.Load()
	st.Shed = h.mem.shed.Load()
	st.WindowsRefused = h.mem.refused.Load()
	st.Deferred = h.deferred.Load()
	return st
}
