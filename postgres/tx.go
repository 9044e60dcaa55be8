package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
)

// beginner is what inWriteTx begins a transaction on: the pool or one of
// its connections.
type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// inWriteTx runs fn in a transaction and commits it, as pgx.BeginFunc does,
// and says what a failed COMMIT means. An error the server reports (a
// *pgconn.PgError: the transaction rolled back) or one raised before the
// COMMIT was sent stored nothing; any other (the connection failed while
// the COMMIT was in flight, as when PostgreSQL restarts) may have been
// committed, and is wrapped with podium.OutcomeUnknown, as the stores'
// contract asks (Store.Commit, WriteTx.Commit).
func inWriteTx(ctx context.Context, db beginner, fn func(pgx.Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // nothing after a commit
	if err := fn(tx); err != nil {
		return err
	}
	return commitOutcome(tx.Commit(ctx))
}

// commitOutcome is the error of a COMMIT, wrapped with
// podium.OutcomeUnknown unless it surely stored nothing.
func commitOutcome(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) || pgconn.SafeToRetry(err) {
		return err
	}
	return podium.OutcomeUnknown(err)
}
