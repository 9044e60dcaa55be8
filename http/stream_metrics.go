package http

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium/stream"
)

// streamCollector exports the hub's gauges and counters, read once per
// scrape.
type streamCollector struct {
	hub *stream.Hub
}

var streamDescs = struct {
	conns, subs, windows, history, memory, budget, events, bytes, shed, refused, deferred *prometheus.Desc
	peak, perAddr, addrMax, memDeferred, behind, cut                                      *prometheus.Desc
}{
	conns:       prometheus.NewDesc("podium_stream_connections", "Open live stream connections (SSE and WebSocket).", nil, nil),
	subs:        prometheus.NewDesc("podium_stream_subscriptions", "Subscriptions on the open live stream connections.", nil, nil),
	windows:     prometheus.NewDesc("podium_stream_windows", "Live windows held: one per (board, limit) being watched or recently watched.", nil, nil),
	history:     prometheus.NewDesc("podium_stream_history_bytes", "Bytes of deltas kept for resuming streams.", nil, nil),
	memory:      prometheus.NewDesc("podium_stream_memory_bytes", "Bytes held for live streams (histories, snapshots, queued events and those being written, window states), counted against --stream-memory, which they never pass.", nil, nil),
	budget:      prometheus.NewDesc("podium_stream_memory_budget_bytes", "The live streams' memory budget (--stream-memory).", nil, nil),
	events:      prometheus.NewDesc("podium_stream_events_sent_total", "Live events handed to connections.", nil, nil),
	bytes:       prometheus.NewDesc("podium_stream_bytes_sent_total", "Bytes of live events handed to connections (SSE framing).", nil, nil),
	shed:        prometheus.NewDesc("podium_stream_shed_total", "Times the live streams dropped their resume histories and cached snapshots because they reached their memory budget.", nil, nil),
	refused:     prometheus.NewDesc("podium_stream_windows_refused_total", "New live windows refused (429) because streams reached their memory budget.", nil, nil),
	peak:        prometheus.NewDesc("podium_stream_memory_peak_bytes", "The most the live streams have held at once since the start (never above the budget).", nil, nil),
	perAddr:     prometheus.NewDesc("podium_stream_memory_per_address_bytes", "One client address's share of the live streams' memory budget (--stream-memory-per-ip).", nil, nil),
	addrMax:     prometheus.NewDesc("podium_stream_memory_address_max_bytes", "The most that one client address holds now: bytes queued for its streams and the states of the windows it opened.", nil, nil),
	memDeferred: prometheus.NewDesc("podium_stream_memory_deferred_total", "Coalescing rounds in which a live window kept its old state because the new one found no room in the memory budget.", nil, nil),
	behind:      prometheus.NewDesc("podium_stream_behind_total", "Times a live stream connection fell behind its memory bound: its queued events were dropped at once and it was resynced with snapshots.", nil, nil),
	cut:         prometheus.NewDesc("podium_stream_cut_total", "Live stream connections ended (rate_limited) because even a resync snapshot found no room in their memory bound.", nil, nil),
	deferred:    prometheus.NewDesc("podium_stream_deferred_total", "Coalescing rounds in which a live window held a change back for a later round because it was sending more than its rate (4x its size in changed entries a second).", nil, nil),
}

func (c streamCollector) Describe(ch chan<- *prometheus.Desc) {
	d := streamDescs
	for _, x := range []*prometheus.Desc{d.conns, d.subs, d.windows, d.history, d.memory, d.budget, d.events, d.bytes, d.shed, d.refused, d.deferred,
		d.peak, d.perAddr, d.addrMax, d.memDeferred, d.behind, d.cut} {
		ch <- x
	}
}

func (c streamCollector) Collect(ch chan<- prometheus.Metric) {
	st, d := c.hub.Stats(), streamDescs
	gauge := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v)
	}
	counter := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v)
	}
	gauge(d.conns, float64(st.Connections))
	gauge(d.subs, float64(st.Subscriptions))
	gauge(d.windows, float64(st.Windows))
	gauge(d.history, float64(st.HistoryBytes))
	gauge(d.memory, float64(st.MemoryBytes))
	gauge(d.budget, float64(st.MemoryBudget))
	counter(d.events, float64(st.EventsSent))
	counter(d.bytes, float64(st.BytesSent))
	counter(d.shed, float64(st.Shed))
	counter(d.refused, float64(st.WindowsRefused))
	counter(d.deferred, float64(st.Deferred))
	gauge(d.peak, float64(st.MemoryPeak))
	gauge(d.perAddr, float64(st.MemoryPerAddr))
	gauge(d.addrMax, float64(st.AddressMax))
	counter(d.memDeferred, float64(st.MemoryDeferred))
	counter(d.behind, float64(st.Behind))
	counter(d.cut, float64(st.Cut))
}
