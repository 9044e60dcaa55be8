package engine

import (
	"errors"
	"io/fs"
	"sync"
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
type health struct {
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
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	st := Status{Loaded: e.loaded.Load(), Closing: e.closing.Load(), FailingSince: e.health.since}
	if e.health.failed != nil {
		st.StorageFailed = storageCause(e.health.failed)
	}
	if e.health.failing != nil {
		st.WritesFailing = storageCause(e.health.failing)
	}
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

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// commitFailed records a failed commit; unknown says its outcome is
// unknown, which stops writes until a restart.
func (e *Engine) commitFailed(err error, unknown bool) {
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	if e.health.failing == nil {
		e.health.since = e.now()
	}
	e.health.failing = err
	if unknown && e.health.failed == nil && e.sh == nil {
		e.health.failed = err
		e.storageFailed.Store(true)
	}
	e.metrics.commitFailed(unknown)
}

// commitWorked clears the failing state after a successful commit.
func (e *Engine) commitWorked() {
	if e.storageFailed.Load() {
		return
	}
	e.health.mu.Lock()
	e.health.failing = nil
	e.health.mu.Unlock()
}

// writeRefusal is why a write is refused now, or nil.
func (e *Engine) writeRefusal() error {
	if !e.loaded.Load() {
		return errLoading
	}
	if e.closing.Load() {
		return errClosing
	}
	if e.storageFailed.Load() {
		e.health.mu.Lock()
		err := e.health.failed
		e.health.mu.Unlock()
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
func (e *Engine) storeFailed(what string, err error) error {
	if err == nil {
		return nil
	}
	var pe *podium.Error
	if errors.As(err, &pe) {
		return err
	}
	unknown := errors.Is(err, podium.ErrOutcomeUnknown)
	e.log.Error("store: "+what+" failed", "err", err, "outcome_unknown", unknown)
	e.commitFailed(err, unknown)
	if unknown {
		return errOutcomeUnknown(err)
	}
	return podium.Errorf(podium.ECodeUnavailable, "the database could not store the change (%s); nothing was changed, retry later", storageCause(err))
}
