package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// CTF contests (package contest): the contest.Store half of Store.

var _ contest.Store = (*Store)(nil)

// contestRows is the Store's CTF contests (contest.Store).
type contestRows struct{ *Store }

func scanContest(sc interface{ Scan(...any) error }) (*contest.Stored, error) {
	var (
		c                contest.Stored
		body             []byte
		created, updated int64
		seq              int64
	)
	if err := sc.Scan(&c.ID, &body, &created, &updated, &c.Version, &seq); err != nil {
		return nil, err
	}
	if err := c.SetDocument(body); err != nil {
		return nil, fmt.Errorf("contest %s: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt, c.Seq = podium.FromMillis(created), podium.FromMillis(updated), uint64(seq)
	return &c, nil
}

// Contests lists every contest with its head, ordered by id.
func (s contestRows) Contests(ctx context.Context) ([]contest.Stored, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Contests.SQLite)
	if err != nil {
		return nil, fmt.Errorf("contests: %w", err)
	}
	defer rows.Close()
	var out []contest.Stored
	for rows.Next() {
		c, err := scanContest(rows)
		if err != nil {
			return nil, fmt.Errorf("contests: %w", err)
		}
		out = append(out, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("contests: %w", err)
	}
	return out, nil
}

// LoadContest returns one contest with its head, nil if it does not exist.
func (s contestRows) LoadContest(ctx context.Context, id string) (*contest.Stored, error) {
	c, err := scanContest(s.r.QueryRowContext(ctx, sqlstore.LoadContest.SQLite, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load contest: %w", err)
	}
	return c, nil
}

// PutContest creates c or replaces it, keeping its head and moving its
// version on.
func (s contestRows) PutContest(ctx context.Context, c *contest.Contest) error {
	body, err := c.Document()
	if err != nil {
		return fmt.Errorf("put contest: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.ExecContext(ctx, sqlstore.PutContest.SQLite,
		c.ID, string(body), podium.Millis(c.CreatedAt), podium.Millis(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put contest: %w", err)
	}
	return s.durable(ctx)
}

// Challenges lists a contest's challenges by order, then id.
func (s contestRows) Challenges(ctx context.Context, id string) ([]contest.Challenge, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Challenges.SQLite, id)
	if err != nil {
		return nil, fmt.Errorf("challenges: %w", err)
	}
	defer rows.Close()
	var out []contest.Challenge
	for rows.Next() {
		var (
			ch               = contest.Challenge{Contest: id}
			body             []byte
			created, updated int64
		)
		if err := rows.Scan(&ch.ID, &body, &ch.Order, &created, &updated); err != nil {
			return nil, fmt.Errorf("challenges: %w", err)
		}
		if err := ch.SetDocument(body); err != nil {
			return nil, fmt.Errorf("challenges: %s/%s: %w", id, ch.ID, err)
		}
		ch.CreatedAt, ch.UpdatedAt = podium.FromMillis(created), podium.FromMillis(updated)
		out = append(out, ch)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("challenges: %w", err)
	}
	return out, nil
}

// PutChallenge creates or replaces a challenge and moves its contest's
// version on. A missing contest is ECodeNotFound.
func (s contestRows) PutChallenge(ctx context.Context, ch *contest.Challenge) error {
	body, err := ch.Document()
	if err != nil {
		return fmt.Errorf("put challenge: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put challenge: %w", err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, sqlstore.BumpContestVersion.SQLite, ch.Contest)
	if err != nil {
		return fmt.Errorf("put challenge: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("put challenge: %w", err)
	} else if n == 0 {
		return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", ch.Contest)
	}
	if _, err := tx.ExecContext(ctx, sqlstore.PutChallenge.SQLite,
		ch.Contest, ch.ID, string(body), ch.Order, podium.Millis(ch.CreatedAt), podium.Millis(ch.UpdatedAt)); err != nil {
		return fmt.Errorf("put challenge: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return fmt.Errorf("put challenge: %w", err)
	}
	return s.durable(ctx)
}

func solves(ctx context.Context, db querier, id string, after uint64, fn func(*contest.Solve) error) error {
	if after > math.MaxInt64 {
		return nil
	}
	rows, err := db.QueryContext(ctx, sqlstore.Solves.SQLite, id, int64(after))
	if err != nil {
		return fmt.Errorf("solves: %w", err)
	}
	defer rows.Close()
	sv := contest.Solve{Contest: id}
	for rows.Next() {
		var seq, at int64
		if err := rows.Scan(&seq, &sv.Challenge, &sv.Team, &at); err != nil {
			return fmt.Errorf("solves: %w", err)
		}
		sv.Seq, sv.At = uint64(seq), podium.FromMillis(at)
		if err := fn(&sv); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("solves: %w", err)
	}
	return nil
}

// Solves calls fn for every solve of a contest after seq after, in order.
func (s contestRows) Solves(ctx context.Context, id string, after uint64, fn func(*contest.Solve) error) error {
	return solves(ctx, s.r, id, after, fn)
}

// Attempt records one attempt (see contest.Store). The write connection is
// this process's only writer and SQLite takes the database's write lock
// at the first write, so the contest's writers take turns.
func (s contestRows) Attempt(ctx context.Context, id string, after uint64, ref contest.AttemptRef, catchUp func(*contest.Solve) error,
	decide func(last uint64, prior *contest.Attempt) (*contest.Attempt, error)) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	defer rollback(tx)
	// Writing the row first takes the write lock before anything is read.
	if _, err := tx.ExecContext(ctx, "UPDATE contests SET seq = seq WHERE id = ?", id); err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	var last int64
	if err := tx.QueryRowContext(ctx, "SELECT seq FROM contests WHERE id = ?", id).Scan(&last); errors.Is(err, sql.ErrNoRows) {
		return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
	} else if err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	if err := solves(ctx, tx, id, after, catchUp); err != nil {
		return err
	}
	var prior *contest.Attempt
	if ref.Idem != "" {
		if prior, err = scanAttempt(tx.QueryRowContext(ctx, sqlstore.AttemptByKey.SQLite, id, ref.Key, ref.Idem), id); errors.Is(err, sql.ErrNoRows) {
			prior = nil
		} else if err != nil {
			return fmt.Errorf("attempt: %w", err)
		}
	}
	a, err := decide(uint64(last), prior)
	if err != nil {
		return err
	}
	if a.ID != 0 {
		return nil // already logged: a retry
	}
	if a.Result == contest.ResultSolved {
		if a.Seq != uint64(last)+1 {
			return fmt.Errorf("attempt: solve seq %d does not follow %d", a.Seq, last)
		}
		if _, err := tx.ExecContext(ctx, sqlstore.InsertSolve.SQLite,
			id, int64(a.Seq), a.Challenge, a.Team, podium.Millis(a.At)); err != nil {
			if code := sqliteCode(err); code == codeConstraintUnique || code == codeConstraintPrimaryKey {
				return podium.Errorf(podium.ECodeConflict, "team %q has already solved %q", a.Team, a.Challenge)
			}
			return fmt.Errorf("attempt: solve: %w", err)
		}
		if _, err := tx.ExecContext(ctx, sqlstore.SetContestSeq.SQLite, int64(a.Seq), id); err != nil {
			return fmt.Errorf("attempt: %w", err)
		}
	} else {
		a.Seq = 0
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO contest_attempts (contest, challenge, team, result, at_ms, key_id, seq, idem, correct)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, a.Challenge, a.Team, a.Result, podium.Millis(a.At), a.Key, int64(a.Seq), nullable(a.Idem), a.Correct)
	if err != nil {
		return fmt.Errorf("attempt: log: %w", err)
	}
	if a.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("attempt: log: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	return s.durable(ctx)
}

// DeleteContest deletes a contest and everything of it in one
// transaction.
func (s contestRows) DeleteContest(ctx context.Context, id string) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("delete contest: %w", err)
	}
	defer rollback(tx)
	for _, table := range []string{"contest_challenges", "contest_solves", "contest_attempts", "contest_snapshots"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE contest = ?", id); err != nil {
			return false, fmt.Errorf("delete contest: %s: %w", table, err)
		}
	}
	res, err := tx.ExecContext(ctx, sqlstore.DeleteContest.SQLite, id)
	if err != nil {
		return false, fmt.Errorf("delete contest: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete contest: %w", err)
	}
	if n == 0 {
		return false, nil // nothing of it was there: the rollback undoes nothing
	}
	if err := s.commitTx(tx); err != nil {
		return false, fmt.Errorf("delete contest: %w", err)
	}
	return true, s.durable(ctx)
}

// DeleteChallenge deletes a challenge without solves.
func (s contestRows) DeleteChallenge(ctx context.Context, id, challenge string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, sqlstore.BumpContestVersion.SQLite, id)
	if err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	} else if n == 0 {
		return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
	}
	var solved int
	if err := tx.QueryRowContext(ctx, sqlstore.ChallengeSolves.SQLite, id, challenge).Scan(&solved); err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	}
	if solved > 0 {
		return errChallengeSolved(challenge, solved)
	}
	res, err = tx.ExecContext(ctx, sqlstore.DeleteChallenge.SQLite, id, challenge)
	if err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	} else if n == 0 {
		return podium.Errorf(podium.ECodeNotFound, "challenge %q is not part of contest %q", challenge, id)
	}
	if err := s.commitTx(tx); err != nil {
		return fmt.Errorf("delete challenge: %w", err)
	}
	return s.durable(ctx)
}

func errChallengeSolved(challenge string, n int) error {
	return podium.Errorf(podium.ECodeConflict, "challenge %q has %d solves: a solved challenge cannot be deleted (its solves chain the standings)", challenge, n)
}

func scanAttempt(sc interface{ Scan(...any) error }, id string) (*contest.Attempt, error) {
	a := contest.Attempt{Contest: id}
	var at, seq int64
	if err := sc.Scan(&a.ID, &a.Challenge, &a.Team, &a.Result, &at, &a.Key, &seq, &a.Idem, &a.Correct); err != nil {
		return nil, err
	}
	a.At, a.Seq = podium.FromMillis(at), uint64(seq)
	return &a, nil
}

// nullable is s, or NULL for "".
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Attempts returns up to limit attempts of a contest after id after.
func (s contestRows) Attempts(ctx context.Context, id string, after int64, limit int) ([]contest.Attempt, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Attempts.SQLite, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	defer rows.Close()
	out := []contest.Attempt{}
	for rows.Next() {
		a, err := scanAttempt(rows, id)
		if err != nil {
			return nil, fmt.Errorf("attempts: %w", err)
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	return out, nil
}

// PutSnapshot stores a standings snapshot unless one is stored for
// (contest, at) already.
func (s contestRows) PutSnapshot(ctx context.Context, id string, at time.Time, seq uint64, doc []byte) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.PutSnapshot.SQLite, id, podium.Millis(at), int64(seq), doc)
	if err != nil {
		return false, fmt.Errorf("put snapshot: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("put snapshot: %w", err)
	}
	return n == 1, s.durable(ctx)
}

// SnapshotAt returns the newest snapshot taken at or before at.
func (s contestRows) SnapshotAt(ctx context.Context, id string, at time.Time) (contest.Snapshot, bool, error) {
	var (
		snap    contest.Snapshot
		ms, seq int64
	)
	err := s.r.QueryRowContext(ctx, sqlstore.SnapshotAt.SQLite, id, podium.Millis(at)).Scan(&ms, &seq, &snap.Doc)
	if errors.Is(err, sql.ErrNoRows) {
		return snap, false, nil
	}
	if err != nil {
		return snap, false, fmt.Errorf("snapshot: %w", err)
	}
	snap.At, snap.Seq = podium.FromMillis(ms), uint64(seq)
	return snap, true, nil
}

// SnapshotTimes lists the times of a contest's snapshots, oldest first.
func (s contestRows) SnapshotTimes(ctx context.Context, id string) ([]time.Time, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.SnapshotTimes.SQLite, id)
	if err != nil {
		return nil, fmt.Errorf("snapshot times: %w", err)
	}
	defer rows.Close()
	out := []time.Time{}
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			return nil, fmt.Errorf("snapshot times: %w", err)
		}
		out = append(out, podium.FromMillis(ms))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("snapshot times: %w", err)
	}
	return out, nil
}
