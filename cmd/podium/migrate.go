package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// podium migrate: move an embedded deployment (SQLite in a data directory)
// to PostgreSQL, then verify the copy. ARCHITECTURE.md ("Operations on
// PostgreSQL") says what is copied and checked, and why a migration that
// stopped half way is resumed rather than cleaned.

// idempotencyKept is how far back idempotency records are copied and
// compared: the engine's default IdempotencyTTL, past which a node neither
// loads nor answers from them.
const idempotencyKept = 48 * time.Hour

// logChunk is how many submissions one Commit copies.
const logChunk = 8192

// progressEvery is how often a long step prints how far it got.
const progressEvery = 2 * time.Second

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var from, db string
	var resume, verifyOnly bool
	fs := newFlagSet("migrate", `Moves an embedded deployment (SQLite in the data directory --from) to the
PostgreSQL database --db, then verifies the copy.

It copies the boards, the players, the API keys (their hashes: the secrets stay
valid), each board's whole submissions log in seq order, its entries (with the
watermark at the end of the log) and the idempotency records of the last 48
hours. Then it compares the two databases: boards, players, keys, idempotency
records, every log row and every entry, field by field, and runs the check of
the entries against the log on the target. Exit 1 on any difference.

The server of --from must be stopped (migrate takes the data directory's lock),
and no node may use --db. The target must be empty: a migration that stopped
half way is continued with --resume, which skips the boards already complete.
The admin key is not stored in the database: the nodes need PODIUM_ADMIN_KEY.`, stdout)
	fs.StringVar(&from, "from", "", "data directory of the embedded deployment to move (its server stopped)")
	fs.StringVar(&db, "db", "", "PostgreSQL URL (postgres://user@host/db) of the empty target database")
	fs.BoolVar(&resume, "resume", false, "continue a migration of the same --from that stopped half way")
	fs.BoolVar(&verifyOnly, "verify-only", false, "copy nothing: only compare --db with --from")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case from == "":
		return usagef("migrate", "--from is required: the data directory to move")
	case db == "":
		return usagef("migrate", "--db is required: the PostgreSQL URL to move it to")
	case resume && verifyOnly:
		return usagef("migrate", "--resume and --verify-only do not go together")
	}
	if err := validateShared("migrate", db, "", ""); err != nil {
		return err
	}
	d, err := openDataDir(from, false, "stop that server first: migrate copies a data directory that no process writes", cliLogger(stderr))
	if err != nil {
		return err
	}
	defer d.release()
	src, err := d.openStore(ctx, sqlite.Options{})
	if err != nil {
		return err
	}
	defer d.closeStore(true)
	dst, nodeName, err := openOpsDB(ctx, db)
	if err != nil {
		return err
	}
	defer dst.Close()
	if err := refuseNodes(ctx, dst, nodeName, db, "nodes must not serve the target while it is filled"); err != nil {
		return err
	}
	t0 := time.Now()
	since := t0.Add(-idempotencyKept)
	m := &migration{src: src, dst: dst, out: stdout, since: since}
	if !verifyOnly {
		if err := m.checkTarget(ctx, resume); err != nil {
			return err
		}
		if err := m.copy(ctx); err != nil {
			return fmt.Errorf("%w\nmigrate stopped: run it again with --resume to continue where it stopped", err)
		}
		fmt.Fprintf(stdout, "migrate: copied in %s; verifying\n", time.Since(t0).Round(time.Millisecond))
	}
	t1 := time.Now()
	v, err := verifyMigration(ctx, src, dst, since, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrate: the target holds %d boards, %d submissions, %d entries, %d players, %d API keys, %d idempotency records (verified in %s)\n",
		v.boards, v.submissions, v.entries, v.players, v.keys, v.idempotency, time.Since(t1).Round(time.Millisecond))
	if v.problems > 0 {
		fmt.Fprintf(stdout, "migrate: verification FAILED: %d difference(s) between %s and the target\n", v.problems, from)
		return errMismatch
	}
	fmt.Fprintln(stdout, "migrate: verified: the target equals the data directory")
	adminKeyNote(stdout, from, db)
	return nil
}

// adminKeyNote tells where the admin key is: it is not in the database.
func adminKeyNote(w io.Writer, from, db string) {
	fmt.Fprintln(w, "\nThe admin key is not stored in the database: every node needs PODIUM_ADMIN_KEY.")
	if path := filepath.Join(from, keyName); exists(path) {
		fmt.Fprintf(w, "This data directory's generated admin key is in %s:\n\n    export PODIUM_ADMIN_KEY=\"$(cat %s)\"\n\n", path, path)
	} else {
		fmt.Fprintf(w, "%s has no admin.key: its server took the key from PODIUM_ADMIN_KEY; give the nodes the same one.\n\n", from)
	}
	fmt.Fprintf(w, "Then start the nodes with: podium serve --db '%s'\n", redactURL(db))
	fmt.Fprintf(w, "Do not start the embedded server on %s again: what it accepted would not reach PostgreSQL.\n", from)
}

// migration copies one store into another.
type migration struct {
	src, dst podium.Store
	out      io.Writer
	since    time.Time // idempotency records created since then are copied
}

// inventory is what a store holds besides the boards' logs and entries.
type inventory struct {
	boards  []podium.Board
	players []podium.Player
	keys    []podium.APIKey
	idem    []podium.IdempotencyRecord
}

func readInventory(ctx context.Context, st podium.Store, since time.Time) (*inventory, error) {
	var (
		inv inventory
		err error
	)
	if inv.boards, err = st.Boards(ctx); err != nil {
		return nil, err
	}
	if inv.players, err = st.Players(ctx); err != nil {
		return nil, err
	}
	if inv.keys, err = st.Keys(ctx); err != nil {
		return nil, err
	}
	if inv.idem, err = st.IdempotencyRecords(ctx, since); err != nil {
		return nil, err
	}
	return &inv, nil
}

func (inv *inventory) empty() bool {
	return len(inv.boards)+len(inv.players)+len(inv.keys)+len(inv.idem) == 0
}

// checkTarget refuses a target that holds anything, unless resume is set
// and what it holds can be part of a copy of the source: every board is
// one of the source's (same creation time), every player and API key too.
func (m *migration) checkTarget(ctx context.Context, resume bool) error {
	t, err := readInventory(ctx, m.dst, time.Time{})
	if err != nil {
		return err
	}
	if t.empty() {
		return nil
	}
	if !resume {
		return fmt.Errorf("the target database already holds %d boards, %d players, %d API keys and %d idempotency records: "+
			"migrate copies into an empty database only. If an earlier podium migrate of this data directory stopped half way, "+
			"run it again with --resume; otherwise point --db at an empty database or schema (for example ?search_path=podium)",
			len(t.boards), len(t.players), len(t.keys), len(t.idem))
	}
	s, err := readInventory(ctx, m.src, time.Time{})
	if err != nil {
		return err
	}
	foreign := func(what string) error {
		return fmt.Errorf("--resume: the target holds %s, which the data directory does not: it is not a copy of this data directory "+
			"that stopped half way. Empty it (for example DROP SCHEMA ... CASCADE and create it again) and run podium migrate without --resume", what)
	}
	boards := map[string]time.Time{}
	for _, b := range s.boards {
		boards[b.ID] = b.CreatedAt
	}
	for _, b := range t.boards {
		if c, ok := boards[b.ID]; !ok || !c.Equal(b.CreatedAt) {
			return foreign(fmt.Sprintf("board %q created at %s", b.ID, b.CreatedAt.Format(time.RFC3339)))
		}
	}
	players := map[string]bool{}
	for _, p := range s.players {
		players[p.ID] = true
	}
	for _, p := range t.players {
		if !players[p.ID] {
			return foreign(fmt.Sprintf("player %q", p.ID))
		}
	}
	keys := map[string]string{}
	for _, k := range s.keys {
		keys[k.ID] = k.Hash
	}
	for _, k := range t.keys {
		if h, ok := keys[k.ID]; !ok || h != k.Hash {
			return foreign(fmt.Sprintf("API key %q", k.ID))
		}
	}
	fmt.Fprintf(m.out, "migrate: resuming: the target holds %d of the boards already\n", len(t.boards))
	return nil
}

// copy copies everything; every step may be done again (upserts, and the
// log from the target's last seq on), so a copy that stopped is resumed by
// running it again.
func (m *migration) copy(ctx context.Context) error {
	s, err := readInventory(ctx, m.src, m.since)
	if err != nil {
		return err
	}
	for i := range s.keys {
		if err := m.dst.PutKey(ctx, &s.keys[i]); err != nil {
			return fmt.Errorf("API key %s: %w", s.keys[i].ID, err)
		}
	}
	fmt.Fprintf(m.out, "migrate: %d API keys copied\n", len(s.keys))
	if err := m.copyPlayers(ctx, s.players); err != nil {
		return err
	}
	wms, err := m.src.Watermarks(ctx)
	if err != nil {
		return err
	}
	dstWMs, err := m.dst.Watermarks(ctx)
	if err != nil {
		return err
	}
	dstBoards, err := m.dst.Boards(ctx)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, b := range dstBoards {
		have[b.ID] = true
	}
	for i := range s.boards {
		b := &s.boards[i]
		if err := m.copyBoard(ctx, b, i+1, len(s.boards), wms[b.ID], have[b.ID], dstWMs[b.ID]); err != nil {
			return fmt.Errorf("board %s: %w", b.ID, err)
		}
	}
	if err := copyTourney(ctx, m.src, m.dst, s.boards, m.out); err != nil { // tourney.go
		return err
	}
	if err := copyLeagues(ctx, m.src, m.dst, s.boards, m.out); err != nil { // league.go
		return err
	}
	if err := copyReview(ctx, m.src, m.dst, m.out); err != nil { // review.go
		return err
	}
	for lo := 0; lo < len(s.idem); lo += 1000 {
		if err := m.dst.Commit(ctx, &podium.Batch{Idempotency: s.idem[lo:min(lo+1000, len(s.idem))]}); err != nil {
			return fmt.Errorf("idempotency records: %w", err)
		}
	}
	fmt.Fprintf(m.out, "migrate: %d idempotency records (since %s) copied\n", len(s.idem), m.since.UTC().Format(time.RFC3339))
	return nil
}

// copyPlayers stores the players a few at a time: one round trip each.
func (m *migration) copyPlayers(ctx context.Context, players []podium.Player) error {
	const workers = 4
	t0 := time.Now()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		errs []error
	)
	stop := every(m.out, progressEvery, func(d time.Duration) string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("migrate: players %d of %d (%s/s)", done, len(players), rate(done, d))
	})
	next := make(chan *podium.Player)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				err := m.dst.PutPlayer(ctx, p)
				mu.Lock()
				done++
				if err != nil {
					errs = append(errs, fmt.Errorf("player %s: %w", p.ID, err))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range players {
		next <- &players[i]
	}
	close(next)
	wg.Wait()
	stop()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "migrate: %d players copied in %s\n", len(players), time.Since(t0).Round(time.Millisecond))
	return nil
}

// copyBoard copies one board: its definition, its log after what the
// target already holds, and its entries with the watermark at the end of
// the log. A board whose log and watermark are already at the source's
// last seq is complete (ReplaceEntries, the last step, sets the watermark
// with the entries in one transaction) and is skipped.
func (m *migration) copyBoard(ctx context.Context, b *podium.Board, n, of int, srcWM uint64, inDst bool, dstWM uint64) error {
	t0 := time.Now()
	last, err := m.src.LastSeq(ctx, b.ID)
	if err != nil {
		return err
	}
	dstLast, err := m.dst.LastSeq(ctx, b.ID)
	if err != nil {
		return err
	}
	if dstLast > last {
		return fmt.Errorf("the target's log goes up to seq %d, past the data directory's %d: not a copy of this data directory", dstLast, last)
	}
	if err := m.putBoard(ctx, b); err != nil {
		return err
	}
	if inDst && dstLast == last && dstWM == last {
		fmt.Fprintf(m.out, "migrate: board %d/%d %s: already complete in the target (seq %d)\n", n, of, b.ID, last)
		return nil
	}
	if dstLast > 0 {
		fmt.Fprintf(m.out, "migrate: board %d/%d %s: the target holds its log up to seq %d; copying the rest\n", n, of, b.ID, dstLast)
	}
	// The log, in seq order, logChunk submissions per transaction.
	var (
		mu     sync.Mutex
		copied int
		at     uint64
	)
	stop := every(m.out, progressEvery, func(d time.Duration) string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("migrate: board %s: log up to seq %d of %d (%s submissions/s)", b.ID, at, last, rate(copied, d))
	})
	batch := &podium.Batch{}
	flush := func() error {
		if len(batch.Submissions) == 0 {
			return nil
		}
		if err := m.dst.Commit(ctx, batch); err != nil {
			return err
		}
		mu.Lock()
		copied += len(batch.Submissions)
		at = batch.Submissions[len(batch.Submissions)-1].Seq
		mu.Unlock()
		batch.Submissions = batch.Submissions[:0]
		return nil
	}
	err = m.src.Log(ctx, b.ID, dstLast, func(s *podium.Submission) error {
		if s.Seq > last {
			return nil // cannot happen with the directory locked; never copy past last
		}
		batch.Submissions = append(batch.Submissions, copySubmission(s))
		if len(batch.Submissions) == logChunk {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	stop()
	if err != nil {
		return fmt.Errorf("copy the log: %w", err)
	}
	tLog := time.Since(t0)
	// The entries as a start-up would load them (the table with the log
	// after its watermark replayed), with the watermark at the end of the
	// log: a node's entries table reflects the whole log.
	entries, err := engine.LoadedEntries(ctx, m.src, b, srcWM)
	if err != nil {
		return err
	}
	t1 := time.Now()
	stop = every(m.out, progressEvery, func(d time.Duration) string {
		return fmt.Sprintf("migrate: board %s: still writing %d entries (%s)", b.ID, len(entries), d.Round(time.Second))
	})
	err = m.dst.ReplaceEntries(ctx, b.ID, entries, last)
	stop()
	if err != nil {
		return fmt.Errorf("write the entries: %w", err)
	}
	tEntries := time.Since(t1)
	fmt.Fprintf(m.out, "migrate: board %d/%d %s: %d submissions (%s/s), %d entries (%s/s), done in %s\n", n, of, b.ID,
		copied, rate(copied, tLog), len(entries), rate(len(entries), tEntries), time.Since(t0).Round(time.Millisecond))
	return nil
}

// putBoard creates or replaces a board in the target. A shared store
// creates boards in a write transaction, which also gives a new board its
// head (the row that the nodes lock and follow) and generation, as a node
// would; Store.PutBoard need not.
func (m *migration) putBoard(ctx context.Context, b *podium.Board) error {
	sh, ok := m.dst.(podium.SharedStore)
	if !ok {
		return m.dst.PutBoard(ctx, b)
	}
	tx, err := sh.Begin(ctx, []string{b.ID})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.PutBoard(ctx, b); err != nil {
		return err
	}
	return tx.Commit(ctx, &podium.Batch{})
}

// copySubmission copies s, whose slices the store reuses.
func copySubmission(s *podium.Submission) podium.Submission {
	c := *s
	c.Keys = slices.Clone(s.Keys)
	c.Meta = nil
	if !emptyMeta(s.Meta) {
		c.Meta = slices.Clone(s.Meta)
	}
	return c
}

// emptyMeta is whether a meta object is empty: stores write it as nothing
// and read it back as {} or nil.
func emptyMeta(m []byte) bool {
	switch strings.TrimSpace(string(m)) {
	case "", "{}", "null":
		return true
	}
	return false
}
