package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// CTF contests (package contest): the contest.Store half of Store. Several
// nodes write one contest: a writer locks the contest's row (SELECT ...
// FOR UPDATE) before it reads what it decides on, so the contest's
// writers take turns and its solves are numbered without gaps or reuse.

var _ contest.Store = (*Store)(nil)

// contestRows is the Store's CTF contests (contest.Store).
type contestRows struct{ *Store }

func scanContest(r pgx.CollectableRow) (contest.Stored, error) {
	var (
		c                contest.Stored
		body             []byte
		created, updated int64
		seq              int64
	)
	if err := r.Scan(&c.ID, &body, &created, &updated, &c.Version, &seq); err != nil {
		return c, err
	}
	if err := c.SetDocument(body); err != nil {
		return c, fmt.Errorf("contest %s: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt, c.Seq = podium.FromMillis(created), podium.FromMillis(updated), uint64(seq)
	return c, nil
}

// Contests lists every contest with its head, ordered by id.
func (s contestRows) Contests(ctx context.Context) ([]contest.Stored, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Contests.Postgres)
	if err != nil {
		return nil, fmt.Errorf("contests: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanContest)
	return out, wrap("contests", err)
}

// LoadContest returns one contest with its head, nil if it does not exist.
func (s contestRows) LoadContest(ctx context.Context, id string) (*contest.Stored, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LoadContest.Postgres, id)
	if err != nil {
		return nil, fmt.Errorf("load contest: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanContest)
	if err != nil || len(out) == 0 {
		return nil, wrap("load contest", err)
	}
	return &out[0], nil
}

// PutContest creates c or replaces it, keeping its head and moving its
// version on.
func (s contestRows) PutContest(ctx context.Context, c *contest.Contest) error {
	body, err := c.Document()
	if err != nil {
		return fmt.Errorf("put contest: %w", err)
	}
	_, err = s.pool.Exec(ctx, sqlstore.PutContest.Postgres,
		c.ID, string(body), podium.Millis(c.CreatedAt), podium.Millis(c.UpdatedAt))
	return wrap("put contest", err)
}

// Challenges lists a contest's challenges by order, then id.
func (s contestRows) Challenges(ctx context.Context, id string) ([]contest.Challenge, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Challenges.Postgres, id)
	if err != nil {
		return nil, fmt.Errorf("challenges: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (contest.Challenge, error) {
		var (
			ch               = contest.Challenge{Contest: id}
			body             []byte
			created, updated int64
		)
		if err := r.Scan(&ch.ID, &body, &ch.Order, &created, &updated); err != nil {
			return ch, err
		}
		if err := ch.SetDocument(body); err != nil {
			return ch, fmt.Errorf("%s/%s: %w", id, ch.ID, err)
		}
		ch.CreatedAt, ch.UpdatedAt = podium.FromMillis(created), podium.FromMillis(updated)
		return ch, nil
	})
	return out, wrap("challenges", err)
}

// PutChallenge creates or replaces a challenge and moves its contest's
// version on. A missing contest is ECodeNotFound.
func (s contestRows) PutChallenge(ctx context.Context, ch *contest.Challenge) error {
	body, err := ch.Document()
	if err != nil {
		return fmt.Errorf("put challenge: %w", err)
	}
	return s.contestTx(ctx, "put challenge", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sqlstore.BumpContestVersion.Postgres, ch.Contest)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", ch.Contest)
		}
		_, err = tx.Exec(ctx, sqlstore.PutChallenge.Postgres,
			ch.Contest, ch.ID, string(body), ch.Order, podium.Millis(ch.CreatedAt), podium.Millis(ch.UpdatedAt))
		return err
	})
}

// contestTx runs fn in a transaction and commits it. An error of fn that
// is a *podium.Error is returned as is; a failed COMMIT is wrapped with
// podium.OutcomeUnknown; waiting for a lock past the lock timeout is
// ECodeUnavailable.
func (s contestRows) contestTx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		var pe *podium.Error
		switch code, _ := pgCode(err); {
		case errors.As(err, &pe):
			return err
		case code == codeLockNotAvailable:
			return podium.Errorf(podium.ECodeUnavailable, "another writer held the contest for longer than the lock timeout; nothing was applied, retry shortly")
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return podium.OutcomeUnknown(fmt.Errorf("%s: %w", what, err))
	}
	return nil
}

type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func contestSolves(ctx context.Context, db pgQuerier, id string, after uint64, fn func(*contest.Solve) error) error {
	if after > math.MaxInt64 {
		return nil
	}
	rows, err := db.Query(ctx, sqlstore.Solves.Postgres, id, int64(after))
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
	return wrap("solves", rows.Err())
}

// Solves calls fn for every solve of a contest after seq after, in order.
func (s contestRows) Solves(ctx context.Context, id string, after uint64, fn func(*contest.Solve) error) error {
	return contestSolves(ctx, s.pool, id, after, fn)
}

// Attempt records one attempt (see contest.Store) in a transaction that
// holds the contest's row.
func (s contestRows) Attempt(ctx context.Context, id string, after uint64, ref contest.AttemptRef, catchUp func(*contest.Solve) error,
	decide func(last uint64, prior *contest.Attempt) (*contest.Attempt, error)) error {
	return s.contestTx(ctx, "attempt", func(tx pgx.Tx) error {
		var last int64
		err := tx.QueryRow(ctx, "SELECT seq FROM contests WHERE id = $1 FOR UPDATE", id).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
		}
		if err != nil {
			return err
		}
		if err := contestSolves(ctx, tx, id, after, catchUp); err != nil {
			return err
		}
		var prior *contest.Attempt
		if ref.Idem != "" {
			rows, err := tx.Query(ctx, sqlstore.AttemptByKey.Postgres, id, ref.Key, ref.Idem)
			if err != nil {
				return err
			}
			found, err := pgx.CollectRows(rows, attemptScanner(id))
			if err != nil {
				return err
			}
			if len(found) > 0 {
				prior = &found[0]
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
				return fmt.Errorf("solve seq %d does not follow %d", a.Seq, last)
			}
			if _, err := tx.Exec(ctx, sqlstore.InsertSolve.Postgres,
				id, int64(a.Seq), a.Challenge, a.Team, podium.Millis(a.At)); err != nil {
				if code, _ := pgCode(err); code == codeUniqueViolation {
					return podium.Errorf(podium.ECodeConflict, "team %q has already solved %q", a.Team, a.Challenge)
				}
				return err
			}
			if _, err := tx.Exec(ctx, sqlstore.SetContestSeq.Postgres, int64(a.Seq), id); err != nil {
				return err
			}
		} else {
			a.Seq = 0
		}
		var idem *string
		if a.Idem != "" {
			idem = &a.Idem
		}
		return tx.QueryRow(ctx, `INSERT INTO contest_attempts (contest, challenge, team, result, at_ms, key_id, seq, idem, correct)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`, id, a.Challenge, a.Team, a.Result, podium.Millis(a.At), a.Key,
			int64(a.Seq), idem, a.Correct).Scan(&a.ID)
	})
}

// DeleteContest deletes a contest and everything of it in one
// transaction, holding the contest's row first as Attempt does.
func (s contestRows) DeleteContest(ctx context.Context, id string) (bool, error) {
	found := false
	err := s.contestTx(ctx, "delete contest", func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, "SELECT 1 FROM contests WHERE id = $1 FOR UPDATE", id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		for _, table := range []string{"contest_challenges", "contest_solves", "contest_attempts", "contest_snapshots"} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE contest = $1", id); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, sqlstore.DeleteContest.Postgres, id)
		return err
	})
	return found && err == nil, err
}

// DeleteChallenge deletes a challenge without solves, holding the
// contest's row so that no solve of it commits meanwhile.
func (s contestRows) DeleteChallenge(ctx context.Context, id, challenge string) error {
	return s.contestTx(ctx, "delete challenge", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sqlstore.BumpContestVersion.Postgres, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
		}
		var solved int
		if err := tx.QueryRow(ctx, sqlstore.ChallengeSolves.Postgres, id, challenge).Scan(&solved); err != nil {
			return err
		}
		if solved > 0 {
			return podium.Errorf(podium.ECodeConflict, "challenge %q has %d solves: a solved challenge cannot be deleted (its solves chain the standings)", challenge, solved)
		}
		tag, err = tx.Exec(ctx, sqlstore.DeleteChallenge.Postgres, id, challenge)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return podium.Errorf(podium.ECodeNotFound, "challenge %q is not part of contest %q", challenge, id)
		}
		return nil
	})
}

func attemptScanner(id string) pgx.RowToFunc[contest.Attempt] {
	return func(r pgx.CollectableRow) (contest.Attempt, error) {
		a := contest.Attempt{Contest: id}
		var at, seq int64
		err := r.Scan(&a.ID, &a.Challenge, &a.Team, &a.Result, &at, &a.Key, &seq, &a.Idem, &a.Correct)
		a.At, a.Seq = podium.FromMillis(at), uint64(seq)
		return a, err
	}
}

// Attempts returns up to limit attempts of a contest after id after.
func (s contestRows) Attempts(ctx context.Context, id string, after int64, limit int) ([]contest.Attempt, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Attempts.Postgres, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	out, err := pgx.CollectRows(rows, attemptScanner(id))
	if out == nil {
		out = []contest.Attempt{}
	}
	return out, wrap("attempts", err)
}

// PutSnapshot stores a standings snapshot unless one is stored for
// (contest, at) already.
func (s contestRows) PutSnapshot(ctx context.Context, id string, at time.Time, seq uint64, doc []byte) (bool, error) {
	tag, err := s.pool.Exec(ctx, sqlstore.PutSnapshot.Postgres, id, podium.Millis(at), int64(seq), doc)
	if err != nil {
		return false, fmt.Errorf("put snapshot: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SnapshotAt returns the newest snapshot taken at or before at.
func (s contestRows) SnapshotAt(ctx context.Context, id string, at time.Time) (contest.Snapshot, bool, error) {
	var (
		snap    contest.Snapshot
		ms, seq int64
	)
	err := s.pool.QueryRow(ctx, sqlstore.SnapshotAt.Postgres, id, podium.Millis(at)).Scan(&ms, &seq, &snap.Doc)
	if errors.Is(err, pgx.ErrNoRows) {
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
	rows, err := s.pool.Query(ctx, sqlstore.SnapshotTimes.Postgres, id)
	if err != nil {
		return nil, fmt.Errorf("snapshot times: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (time.Time, error) {
		var ms int64
		err := r.Scan(&ms)
		return podium.FromMillis(ms), err
	})
	if out == nil {
		out = []time.Time{}
	}
	return out, wrap("snapshot times", err)
}
