package contest

import (
	"context"
	"time"
)

// Store keeps contests in the database of record. The solves are the
// authority: standings, values and first bloods are recomputed from them,
// and a snapshot is a copy of a computation kept for later reading.
//
// Implementations: sqlite.Store and postgres.Store; every implementation
// passes storetest.RunContests.
type Store interface {
	// Contests lists every contest, ordered by id, with its head.
	Contests(ctx context.Context) ([]Stored, error)
	// LoadContest returns one contest with its head; nil if it does not
	// exist.
	LoadContest(ctx context.Context, id string) (*Stored, error)
	// PutContest creates c or replaces the contest with its id (its head
	// is kept, its version moves on).
	PutContest(ctx context.Context, c *Contest) error
	// Challenges lists the challenges of a contest, ordered by Order then
	// id.
	Challenges(ctx context.Context, contest string) ([]Challenge, error)
	// PutChallenge creates ch or replaces the challenge with its contest
	// and id, and moves the contest's version on. A missing contest is
	// ECodeNotFound.
	PutChallenge(ctx context.Context, ch *Challenge) error
	// Solves calls fn for every solve of a contest with a seq above after,
	// in seq order. The *Solve is reused between calls.
	Solves(ctx context.Context, contest string, after uint64, fn func(*Solve) error) error
	// Attempt records one attempt in a transaction that first locks the
	// contest (its writers take turns, across processes), then calls
	// catchUp for every solve committed after after, in seq order, then
	// calls decide with the contest's last seq and, when ref.Idem is not
	// empty, the attempt already logged with ref's key id and Idem (nil
	// if none). decide returns the attempt to log; if its Result is
	// ResultSolved, its Seq must be the last seq + 1 and the solve is
	// stored too. If decide returns an attempt already logged (ID not 0,
	// as prior), nothing is stored. An error from a callback ends the
	// transaction and stores nothing. A missing contest is ECodeNotFound;
	// a second solve of a team on a challenge is ECodeConflict. The
	// attempt's ID is set on success. A failed COMMIT is wrapped with
	// podium.OutcomeUnknown.
	Attempt(ctx context.Context, contest string, after uint64, ref AttemptRef, catchUp func(*Solve) error,
		decide func(last uint64, prior *Attempt) (*Attempt, error)) error
	// DeleteContest deletes a contest with its challenges, solves,
	// attempts and snapshots, in one transaction that first locks the
	// contest as Attempt does. It reports whether the contest existed.
	DeleteContest(ctx context.Context, id string) (bool, error)
	// DeleteChallenge deletes a challenge that has no solve and moves its
	// contest's version on; its attempts stay in the log. A missing
	// contest or challenge is ECodeNotFound, a challenge with solves
	// ECodeConflict (solves are never taken back: their seqs chain the
	// standings and the streams).
	DeleteChallenge(ctx context.Context, contest, id string) error
	// Attempts returns up to limit attempts of a contest with an ID above
	// after, oldest first.
	Attempts(ctx context.Context, contest string, after int64, limit int) ([]Attempt, error)
	// PutSnapshot stores a standings document of a contest taken at at (to
	// the millisecond), covering solves up to seq. A snapshot already
	// stored for (contest, at) is kept: several nodes may store the same
	// one. It reports whether this call stored it.
	PutSnapshot(ctx context.Context, contest string, at time.Time, seq uint64, doc []byte) (bool, error)
	// SnapshotAt returns the newest snapshot of a contest taken at or
	// before at; ok is false if there is none.
	SnapshotAt(ctx context.Context, contest string, at time.Time) (snap Snapshot, ok bool, err error)
	// SnapshotTimes lists the times of a contest's snapshots, oldest first.
	SnapshotTimes(ctx context.Context, contest string) ([]time.Time, error)
}

// AttemptRef names an attempt by the key that reported it and the
// request's Idempotency-Key.
type AttemptRef struct {
	Key, Idem string
}

// Stored is a contest with its head: Version moves on with every change
// of the contest or one of its challenges, Seq is its last solve's seq.
// Another node compares them with what it has to know what to reload.
type Stored struct {
	Contest
	Version int64
	Seq     uint64
}

// Snapshot is a stored standings document.
type Snapshot struct {
	At  time.Time
	Seq uint64
	Doc []byte
}
