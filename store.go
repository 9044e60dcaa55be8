package podium

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Store is the database of record. Everything in memory (rank indexes,
// player names, idempotency answers) is rebuilt from it at start.
//
// It is composed of one interface per part of the data (boards, players,
// keys, the log, quotas, idempotency), so that code needing one part can
// ask for that part alone. The features' stores (SessionStore,
// EvidenceStore, ReviewStore, FeedStore, TourneyStore) are optional
// abilities a caller detects with a type assertion, not part of Store:
// both stores have them, but a Store without them still runs boards.
//
// Implementations: sqlite.Store, postgres.Store. Every implementation
// passes the contract suite in package storetest.
type Store interface {
	BoardStore
	PlayerStore
	KeyStore
	LogStore
	QuotaStore
	IdempotencyStore

	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

// BoardStore keeps the boards' definitions.
type BoardStore interface {
	// Boards lists every board.
	Boards(ctx context.Context) ([]Board, error)
	// PutBoard creates or replaces a board, and writes parts (made by this
	// store, as for Commit) in the same transaction: nothing of either is
	// stored unless both are. A part that Batch.Check refuses, or that
	// another store made, fails the call before anything is written.
	PutBoard(ctx context.Context, b *Board, parts ...Part) error
	// DeleteBoard removes a board, its entries and its log, and writes
	// parts in the same transaction, as PutBoard does. A missing board
	// is ECodeBoardNotFound (and nothing is written).
	DeleteBoard(ctx context.Context, id string, parts ...Part) error
}

// BoardPut is one board of a PutBoards call: the board, stored as given,
// and the rows its change adds (as PutBoard's parts).
type BoardPut struct {
	Board *Board
	Parts []Part
}

// PlayerStore keeps the registered players.
type PlayerStore interface {
	// Players lists every registered player.
	Players(ctx context.Context) ([]Player, error)
	// PutPlayer creates or replaces a player.
	PutPlayer(ctx context.Context, p *Player) error
}

// KeyStore keeps the API keys.
type KeyStore interface {
	// Keys lists the API keys, hashes included.
	Keys(ctx context.Context) ([]APIKey, error)
	// PutKey stores a new API key.
	PutKey(ctx context.Context, k *APIKey) error
	// DeleteKey revokes a key. A missing key is ECodeNotFound.
	DeleteKey(ctx context.Context, id string) error
}

// LogStore keeps the boards' logs and the entries table that checkpoints
// them, and commits groups of writes.
type LogStore interface {
	// Commit durably stores one group of writes in a single transaction:
	// all of it or none. It returns only once the data is on disk (as
	// durable as the store is configured to be). Within a batch the log
	// rows are stored first, then entry deletes, then entry upserts (a
	// later upsert of the same entry wins), then watermarks, then
	// idempotency records (a record keeps its first answer; a record
	// stored without one, status 0, takes the first that comes), then the
	// parts (Part).
	Commit(ctx context.Context, b *Batch) error

	// LoadEntries calls fn for every entry of one board and period, in no
	// particular order. The *Entry and its slices are reused between calls.
	LoadEntries(ctx context.Context, board, period string, fn func(*Entry) error) error
	// Periods lists the periods of a board that have entries, newest first.
	Periods(ctx context.Context, board string) ([]PeriodCount, error)
	// LastSeq returns the highest seq logged for a board, 0 if none.
	LastSeq(ctx context.Context, board string) (uint64, error)
	// Log calls fn for every logged submission of a board with a seq
	// greater than after, in seq order. The *Submission is reused between
	// calls.
	Log(ctx context.Context, board string, after uint64, fn func(*Submission) error) error
	// Watermarks returns, per board, the seq up to which the entries table
	// reflects the log (boards without one are at 0). Entries are written
	// behind the log: the log is the authority, the entries table a
	// checkpoint of it that makes start-up fast.
	Watermarks(ctx context.Context) (map[string]uint64, error)

	// ReplaceEntries atomically replaces every entry of a board with entries
	// and sets its watermark (used by rebuild, which recomputes entries from
	// the log).
	ReplaceEntries(ctx context.Context, board string, entries []Entry, watermark uint64) error
}

// QuotaStore counts what quotas limit (quota.go).
type QuotaStore interface {
	// CountSubmissions counts, for each of players, the score submissions
	// on a board in a period that have a seq of at most upTo and, unless
	// since and until are both zero, were made at or after since and
	// before until (quota.go). Players without any are left out of the
	// map. It reads an index, not the board's whole log.
	CountSubmissions(ctx context.Context, board, period string, players []string, upTo uint64, since, until time.Time) (map[string]int, error)
}

// IdempotencyStore keeps the answers of requests sent with an
// Idempotency-Key (the records themselves are written by Commit).
type IdempotencyStore interface {
	// IdempotencyRecords returns the records created at or after since.
	IdempotencyRecords(ctx context.Context, since time.Time) ([]IdempotencyRecord, error)
	// IdempotencyIndex calls fn with each record created at or after
	// since, newest first, without its body (Body nil), until fn returns
	// false: what a node keeps in memory to decide, read without holding
	// every answer at once.
	IdempotencyIndex(ctx context.Context, since time.Time, fn func(*IdempotencyRecord) bool) error
	// LookupIdempotency returns the record of scope and key, body
	// included; ok is false when none is stored.
	LookupIdempotency(ctx context.Context, scope, key string) (rec IdempotencyRecord, ok bool, err error)
	// PruneIdempotency deletes records created before before.
	PruneIdempotency(ctx context.Context, before time.Time) (int, error)
}

// Batch is one transaction: log rows (a group commit of submissions), or
// entry upserts and deletes with the watermarks they bring the entries
// table to (a checkpoint), and idempotency answers to remember.
type Batch struct {
	Submissions []Submission
	Upserts     []Entry
	Deletes     []EntryRef
	Watermarks  []Watermark
	Idempotency []IdempotencyRecord
	// Parts are the feature modules' rows (the activity feed,
	// tournaments, review), stored in the same transaction: each made by
	// the store that commits the batch (Part).
	Parts []Part
}

// Part is one feature module's rows in a Batch. A module asks the store
// for it through the module's own store interface (FeedStore.FeedPart,
// TourneyStore.TourneyPart, ReviewStore.ReviewPart), and the same store
// writes it in Commit, so that the stores' commit code loops over parts
// without knowing the features. A part made by another store (or not by a
// store) fails the commit, nothing of it stored. The parts are written
// after the idempotency records, in order, except those that must run
// before the log (a tournament's lease fence, whose loss must fail the
// transaction before anything is written).
type Part interface {
	// Len is the number of rows.
	Len() int
	// Check reports what in the rows no store can keep faithfully (see
	// Batch.Check).
	Check() error
}

// Watermark says that the entries table reflects a board's log up to Seq.
type Watermark struct {
	Board string
	Seq   uint64
}

// Len is the number of rows in the batch.
func (b *Batch) Len() int {
	n := len(b.Submissions) + len(b.Upserts) + len(b.Deletes) + len(b.Watermarks) + len(b.Idempotency)
	for _, p := range b.Parts {
		if p != nil { // Check refuses it
			n += p.Len()
		}
	}
	return n
}

// Reset empties b, keeping its capacity.
func (b *Batch) Reset() {
	b.Submissions = b.Submissions[:0]
	b.Upserts = b.Upserts[:0]
	b.Deletes = b.Deletes[:0]
	b.Watermarks = b.Watermarks[:0]
	b.Idempotency = b.Idempotency[:0]
	clear(b.Parts) // let the parts' rows be collected
	b.Parts = b.Parts[:0]
}

// StartLoader is an optional ability of a Store: what a start reads of
// every board, each part in one statement, where Engine.Start otherwise
// asks three to five queries of each board (LastSeq, Periods, Log,
// LoadEntries): at 100,000 boards the queries' own cost was most of a
// start. Each method answers what the per-board one would, for every board
// at once.
type StartLoader interface {
	// LastSeqs returns LastSeq of every board that logged anything.
	LastSeqs(ctx context.Context) (map[string]uint64, error)
	// AllPeriods returns Periods of every board that has entries.
	AllPeriods(ctx context.Context) (map[string][]PeriodCount, error)
	// Tails calls fn for every logged submission of every board with a seq
	// above the board's watermark (Watermarks; 0 without one), in no
	// particular order. The *Submission is reused between calls. An error
	// from fn stops the scan and is returned unwrapped.
	Tails(ctx context.Context, fn func(*Submission) error) error
	// LoadPeriods calls fn for every entry of the given board periods (the
	// Board and Period of each ref; Player is ignored), in no particular
	// order, with Board and Period set. The *Entry is reused as in
	// LoadEntries; an error from fn stops the scan and is returned
	// unwrapped.
	LoadPeriods(ctx context.Context, periods []EntryRef, fn func(*Entry) error) error
}

// EntryRef names one entry.
type EntryRef struct {
	Board, Period, Player string
}

// PeriodCount is a period id with its number of entries.
type PeriodCount struct {
	ID      string `json:"id"`
	Entries int    `json:"entries"`
}

// IdempotencyRecord remembers the answer to a request sent with an
// Idempotency-Key, so a retry gets the first answer. Scope is who sent it
// (the API key id) and which endpoint; RequestHash is the SHA-256 of the
// body, so the same key with another body is a conflict.
type IdempotencyRecord struct {
	Scope       string
	Key         string
	RequestHash []byte
	Status      int
	Body        []byte
	CreatedAt   time.Time
}

// SharedStore is a Store that several podium nodes use at once (PostgreSQL).
// The database serialises the writers of a board: a write transaction holds
// the board's head row (its last logged seq) locked from before the writer
// computes until it commits, so two nodes never compute on the same state
// and seqs are never reused. Every node follows what the others commit:
// the log by seq, and metadata (boards, players, API keys) through a
// change feed.
type SharedStore interface {
	Store
	// Begin starts a write transaction that holds the write locks of the
	// given boards, taken in id order so that writers never deadlock. A
	// board that does not exist is not locked and has no head.
	Begin(ctx context.Context, boards []string) (WriteTx, error)
	// Heads returns the last logged seq of every board.
	Heads(ctx context.Context) (map[string]uint64, error)
	// Changes returns the metadata changes committed after the change with
	// id after (0: from the start), oldest first, at most limit. Changes
	// are visible in id order: a change is never committed after one with
	// a higher id is visible. Old changes are pruned: when some after
	// after are gone, Changes returns ErrChangesPruned, and the caller,
	// having missed changes, must reload every board, player and key (and
	// go on from the LastChange read before it reloaded).
	Changes(ctx context.Context, after int64, limit int) ([]Change, error)
	// LastChange returns the id of the newest change (0 if none).
	LastChange(ctx context.Context) (int64, error)
	// LoadBoard returns one board, nil if it does not exist.
	LoadBoard(ctx context.Context, id string) (*Board, error)
	// LoadPlayer returns one registered player, nil if it is not
	// registered.
	LoadPlayer(ctx context.Context, id string) (*Player, error)
	// LoadKey returns one API key (hash included), nil if it does not
	// exist (revoked).
	LoadKey(ctx context.Context, id string) (*APIKey, error)
}

// WriteTx is one write transaction of a SharedStore. Exactly one of Commit
// or Rollback ends it; Rollback after Commit does nothing.
type WriteTx interface {
	// Head returns the last logged seq and the generation of a locked
	// board; ok is false for a board that does not exist.
	Head(board string) (seq, gen uint64, ok bool)
	// LastChange is the id of the newest metadata change committed before
	// the locks were taken (see SharedStore.LastChange): a writer that has
	// applied less may hold a stale definition (an aggregate made over a
	// board it writes) and catches up before it computes.
	LastChange() int64
	// Log calls fn for every logged submission of a board with a seq above
	// after, in seq order (within the transaction).
	Log(ctx context.Context, board string, after uint64, fn func(*Submission) error) error
	// Idempotency returns the stored records among keys, and holds those
	// keys until the transaction ends: two transactions that look up one
	// key (on any boards) take turns, so they never both find it missing
	// and both store a request under it.
	Idempotency(ctx context.Context, keys []IdempotencyRef) ([]IdempotencyRecord, error)
	// PutBoard creates or replaces a board, and its head when it is new,
	// and sets b.Gen. The board must be one of those named in Begin. A
	// board that Begin found missing and another transaction has created
	// since is ECodeConflict (then only Rollback is left).
	PutBoard(ctx context.Context, b *Board) error
	// DeleteBoard removes a board with its head, entries and log. The
	// board must be one of those named in Begin; a missing one is
	// ECodeBoardNotFound.
	DeleteBoard(ctx context.Context, id string) error
	// Commit stores b as Store.Commit does, moves the head of each board b
	// logs submissions for to its highest seq (which must follow the head:
	// head+1, head+2, ...), and commits. A failed COMMIT is wrapped with
	// OutcomeUnknown; any other error means nothing was stored.
	Commit(ctx context.Context, b *Batch) error
	// Rollback ends the transaction without storing anything.
	Rollback()
}

// ErrChangesPruned is returned by SharedStore.Changes when changes after
// the requested position were pruned: the caller missed them.
var ErrChangesPruned = errors.New("the change feed was pruned past this position; reload everything")

// IdempotencyRef names an idempotency record.
type IdempotencyRef struct {
	Scope, Key string
}

// ChangeKind says what a metadata change touched.
type ChangeKind string

// Kinds of metadata changes.
const (
	ChangeBoard  ChangeKind = "board"  // created, updated or deleted
	ChangePlayer ChangeKind = "player" // registered, renamed, hidden or shown
	ChangeKey    ChangeKind = "key"    // created or revoked
	// ChangeSession: a player session issued, refreshed or revoked
	// (session.go); Key is the session id.
	ChangeSession ChangeKind = "session"
)

// Change is one entry of a SharedStore's change feed: which object changed.
// A node reloads that object from the store.
type Change struct {
	ID   int64
	Kind ChangeKind
	Key  string // board id, player id, API key id or session id
}

// Check reports what in b no store can keep faithfully: more than MaxKeys
// keys, an entry without keys, an unknown kind, or a seq or watermark past
// the int64 range that SQL integers hold, a nil part, and what each part
// reports (Part.Check). Stores call it before writing anything.
func (b *Batch) Check() error {
	for i := range b.Submissions {
		sub := &b.Submissions[i]
		if len(sub.Keys) > MaxKeys {
			return fmt.Errorf("submission %d of board %s has %d keys", sub.Seq, sub.Board, len(sub.Keys))
		}
		if sub.Seq > math.MaxInt64 {
			return fmt.Errorf("submission seq %d is out of range", sub.Seq)
		}
		if sub.Kind != KindScore && sub.Kind != KindDelete && sub.Kind != KindRestore {
			return fmt.Errorf("submission %d of board %s has unknown kind %d", sub.Seq, sub.Board, sub.Kind)
		}
	}
	for i := range b.Upserts {
		if err := b.Upserts[i].Check(); err != nil {
			return err
		}
	}
	for _, w := range b.Watermarks {
		if w.Seq > math.MaxInt64 {
			return fmt.Errorf("watermark %d of board %s is out of range", w.Seq, w.Board)
		}
	}
	for i, p := range b.Parts {
		if p == nil {
			return fmt.Errorf("part %d is nil", i)
		}
		if err := p.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Check reports an entry no store can keep faithfully: 0 or more than
// MaxKeys keys, or a seq past the int64 range.
func (e *Entry) Check() error {
	if len(e.Keys) < 1 || len(e.Keys) > MaxKeys {
		return fmt.Errorf("entry %s/%s/%s has %d keys", e.Board, e.Period, e.Player, len(e.Keys))
	}
	if e.Seq > math.MaxInt64 {
		return fmt.Errorf("entry seq %d is out of range", e.Seq)
	}
	if len(e.Results) > MaxKeep {
		return fmt.Errorf("entry %s/%s/%s has %d results", e.Board, e.Period, e.Player, len(e.Results))
	}
	for i := range e.Results {
		if len(e.Results[i].Keys) != len(e.Keys) {
			return fmt.Errorf("entry %s/%s/%s: result %d has %d keys, the entry %d", e.Board, e.Period, e.Player, i, len(e.Results[i].Keys), len(e.Keys))
		}
	}
	return nil
}
