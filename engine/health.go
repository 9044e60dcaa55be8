package engine

import (
	"errors"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podiumhq/podium"
)

// health is what the engine knows about its own ability to serve: whether
// the indexes are loaded, whether it is shutting down, and whether writes
// work. Reads are served from memory whatever the storage does; writes
// stop for good after a failure that leaves the outcome of a commit
// unknown (an fsync or a COMMIT failed: what is on disk no longer matches
// memory, so only a restart, which loads what survived, can continue), and
// fail one by one, with "nothing was applied", while commits fail cleanly
// (a full disk).
//
// Lifecycle and storage failures are recorded here by the engine (Start,
// Close, the committer and the stores' callers), and every write asks
// refusal first.
type health struct {
	now     podium.Clock
	log     *slog.Logger
	shared  bool     // several nodes: a commit's unknown outcome does not stop writes
	metrics *metrics // podium_commit_failures_total

	loaded  atomic.Bool // Start finished: reads can be served
	closing atomic.Bool
	stopped atomic.Bool // a commit's outcome is unknown: no more writes until restart

	mu sync.Mutex
	// failed is the storage failure that stopped writes, nil if none.
	failed error
	// failing is the error of the last commit if it failed, nil once a
	// commit succeeds again; since is when the failures began.
	failing error
	since   time.Time
}

// Status is the engine's view of its own health, for /readyz. The
// failures are described without internals (file names), as storageCause
// does.
type Status struct {
	Loaded  bool // the indexes are loaded: reads can be served
	Closing bool // shutting down
	// StorageFailed says why writes stopped after a storage failure, ""
	// if they did not; only a restart resumes them.
	StorageFailed string
	// WritesFailing says why the last commit failed while commits fail
	// ("" when the last one worked), since FailingSince.
	WritesFailing string
	FailingSince  time.Time
	// Shared mode only: Database says why the database cannot be reached
	// ("" while it can: then reads may be stale and writes fail fast), and
	// Broker why notices cannot be exchanged ("" while they can: then
	// changes from other nodes arrive by polling).
	Shared   bool
	Database string
	Broker   string
}

// Status reports the engine's health.
func (e *Engine) Status() Status {
	st := e.health.status()
	if e.sh != nil {
		st.Shared = true
		if err := e.sh.DBError(); err != nil {
			st.Database = "unreachable"
		}
		if b := e.sh.broker; b != nil {
			if d, ok := b.(interface{ Detail() string }); ok {
				st.Broker = d.Detail()
			} else if err := b.Err(); err != nil {
				st.Broker = brokerName(b, 0) + " unreachable (" + truncate(err.Error(), 200) + "); changes from other nodes arrive by polling"
			}
		}
	}
	return st
}

// status is the node's own part of Status.
func (h *health) status() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := Status{Loaded: h.loaded.Load(), Closing: h.closing.Load(), FailingSince: h.since}
	if h.failed != nil {
		st.StorageFailed = storageCause(h.failed)
	}
	if h.failing != nil {
		st.WritesFailing = storageCause(h.failing)
	}
	return st
}

// serving reports whether the engine serves: its indexes are loaded and it
// is not shutting down.
func (h *health) serving() bool { return h.loaded.Load() && !h.closing.Load() }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// commitFailed records a failed commit; unknown says its outcome is
// unknown, which stops writes until a restart (on a store of its own).
func (h *health) commitFailed(err error, unknown bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failing == nil {
		h.since = h.now()
	}
	h.failing = err
	if unknown && h.failed == nil && !h.shared {
		h.failed = err
		h.stopped.Store(true)
	}
	h.metrics.commitFailed(unknown)
}

// commitWorked clears the failing state after a successful commit.
func (h *health) commitWorked() {
	if h.stopped.Load() {
		return
	}
	h.mu.Lock()
	h.failing = nil
	h.mu.Unlock()
}

// refusal is why a write is refused now, or nil.
func (h *health) refusal() error {
	if !h.loaded.Load() {
		return errLoading
	}
	if h.closing.Load() {
		return errClosing
	}
	if h.stopped.Load() {
		h.mu.Lock()
		err := h.failed
		h.mu.Unlock()
		return podium.Errorf(podium.ECodeUnavailable, "podium stopped taking writes after a storage failure (%s); reads still work; an operator must restart it", storageCause(err))
	}
	return nil
}

// storageCause says what failed, for an answer to a client: the system
// call and its error ("fdatasync: no space left on device") without file
// names or other internals, which go to the log.
func storageCause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return "see the server log"
}

var (
	errLoading = podium.Errorf(podium.ECodeUnavailable, "podium is loading its indexes; retry shortly")
	errClosing = podium.Errorf(podium.ECodeUnavailable, "podium is shutting down; retry shortly (on another node, or once it is back)")
)

// errOutcomeUnknown answers the requests of a commit whose outcome is
// unknown.
func errOutcomeUnknown(err error) error {
	return podium.Errorf(podium.ECodeOutcomeUnknown, "the write reached the database but its commit failed (%s): it may or may not have been stored. podium stopped taking writes; once it is restarted, retry with the same Idempotency-Key, which is then safe", storageCause(err))
}

// storeFailed turns the error of a store write made outside the group
// pipeline (boards, players, keys, checkpoints) into what the caller sees,
// and records it: a domain error passes through, an unknown outcome stops
// writes, any other failure means nothing was changed.
func (h *health) storeFailed(what string, err error) error {
	if err == nil {
		return nil
	}
	var pe *podium.Error
	if errors.As(err, &pe) {
		return err
	}
	unknown := errors.Is(err, podium.ErrOutcomeUnknown)
	h.log.Error("store: "+what+" failed", "err", err, "outcome_unknown", unknown)
	h.commitFailed(err, unknown)
	if unknown {
		return errOutcomeUnknown(err)
	}
	return podium.Errorf(podium.ECodeUnavailable, "the database could not store the change (%s); nothing was changed, retry later", storageCause(err))
}
