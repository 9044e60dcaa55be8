package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
)

// metrics are the engine's Prometheus series.
type metrics struct {
	submissions *prometheus.CounterVec
	batchSize   prometheus.Histogram
	commitTime  prometheus.Histogram
	syncTime    prometheus.Histogram
	cpSize      prometheus.Histogram
	cpTime      prometheus.Histogram
	failures    *prometheus.CounterVec
}

func newMetrics(e *Engine, reg prometheus.Registerer) *metrics {
	m := &metrics{
		submissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_submissions_total",
			Help: "Score submissions by outcome (ok, or the error code).",
		}, []string{"result"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "podium_commit_batch_submissions",
			Help:    "Submissions per group commit.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8),
		}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "podium_commit_seconds",
			Help:    "Time to durably commit one group.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}),
	}
	m.syncTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "podium_sync_seconds",
		Help:    "Time a group waited for its fsync after being written (shared fsyncs make it short).",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2.5, 12),
	})
	m.cpSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "podium_checkpoint_entries",
		Help:    "Entries written by one checkpoint of the entries table.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 9),
	})
	m.cpTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "podium_checkpoint_seconds",
		Help:    "Time to write one checkpoint of the entries table.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12),
	})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_commit_failures_total",
		Help: "Failed commits by outcome: not_stored (nothing was stored; writes go on) or unknown (a COMMIT or fsync failed; writes stop until restart).",
	}, []string{"outcome"})
	if reg == nil {
		return m
	}
	reg.MustRegister(m.submissions, m.batchSize, m.commitTime, m.syncTime, m.cpSize, m.cpTime, m.failures,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_writes_failing",
			Help: "1 while commits fail (the last one failed), else 0.",
		}, func() float64 { return boolGauge(e.Status().WritesFailing != "") }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_database_up",
			Help: "1 while the database answers (shared mode: the last operation reached it), else 0.",
		}, func() float64 { return boolGauge(e.Status().Database == "") }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_broker_up",
			Help: "1 while the broker (Redis, or LISTEN/NOTIFY) exchanges notices or none is configured, else 0 (nodes then poll).",
		}, func() float64 { return boolGauge(e.Status().Broker == "") }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_storage_failed",
			Help: "1 once writes stopped after a storage failure (an fsync or COMMIT failed); a restart is needed.",
		}, func() float64 { return boolGauge(e.health.stopped.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_index_entries",
			Help: "Entries held in the in-memory rank indexes.",
		}, func() float64 { n, _ := indexStats(e.boardStates()); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_index_bytes",
			Help: "Estimated heap bytes of the rank indexes and the player table.",
		}, func() float64 { _, b := indexStats(e.boardStates()); return float64(b + e.players.bytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_players",
			Help: "Distinct players known to this node.",
		}, func() float64 { return float64(e.players.count()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_old_periods_bytes",
			Help: "Estimated bytes of the old periods (older than each board's previous one) kept in memory under --old-periods-bytes.",
		}, func() float64 { return float64(e.old.bytes.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_old_periods",
			Help: "Old periods kept in memory under --old-periods-bytes.",
		}, func() float64 { return float64(e.old.stats().Periods) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "podium_old_periods_evictions_total",
			Help: "Old periods evicted from memory to stay under --old-periods-bytes (the next read loads them again).",
		}, func() float64 { return float64(e.old.evictions.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "podium_old_periods_loads_total",
			Help: "Periods read from the store on demand (first reads of old periods, and reads after an eviction).",
		}, func() float64 { return float64(e.old.loads.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_idempotency_bytes",
			Help: "Estimated bytes of the Idempotency-Key records kept in memory under --idempotency-bytes (answers not stored yet included).",
		}, func() float64 { return float64(e.idem.bytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_idempotency_records",
			Help: "Idempotency-Key records kept in memory to decide retries.",
		}, func() float64 { return float64(e.idem.records()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "podium_idempotency_evictions_total",
			Help: "Idempotency-Key records evicted from memory to stay under --idempotency-bytes; until they expire, keys missing from memory are looked up in the database.",
		}, func() float64 { return float64(e.idem.evictions.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "podium_idempotency_lookups_total",
			Help: "Idempotency-Key records read from the database: answers of retries, and keys memory may have evicted.",
		}, func() float64 { return float64(e.idem.lookups.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "podium_boards",
			Help: "Boards.",
		}, func() float64 { e.mu.RLock(); defer e.mu.RUnlock(); return float64(e.boards.len()) }),
	)
	return m
}

func (m *metrics) commit(n int, d time.Duration) {
	m.batchSize.Observe(float64(n))
	m.commitTime.Observe(d.Seconds())
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (m *metrics) commitFailed(unknown bool) {
	if unknown {
		m.failures.WithLabelValues("unknown").Inc()
	} else {
		m.failures.WithLabelValues("not_stored").Inc()
	}
}

func (m *metrics) sync(d time.Duration) { m.syncTime.Observe(d.Seconds()) }

func (m *metrics) checkpoint(n int, d time.Duration) {
	m.cpSize.Observe(float64(n))
	m.cpTime.Observe(d.Seconds())
}

func (m *metrics) submitted(err error) {
	if err == nil {
		m.submissions.WithLabelValues("ok").Inc()
		return
	}
	m.submissions.WithLabelValues(podium.ErrorCode(err)).Inc()
}

// indexStats sums entries and estimated bytes over every loaded index of
// boards.
func indexStats(boards []*BoardState) (entries, bytes int) {
	for _, bs := range boards {
		bs.mu.RLock()
		for _, ps := range bs.periods {
			entries += ps.idx.Len()
			bytes += ps.idx.Bytes()
		}
		bs.mu.RUnlock()
	}
	return entries, bytes
}
