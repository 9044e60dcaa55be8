package postgres

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
)

type fakeTx struct {
	pgx.Tx
	commitErr  error
	committed  bool
	rolledBack bool
}

func (f *fakeTx) Commit(context.Context) error { f.committed = true; return f.commitErr }
func (f *fakeTx) Rollback(context.Context) error {
	if !f.committed {
		f.rolledBack = true
	}
	return nil
}

type fakeBeginner struct{ tx *fakeTx }

func (b fakeBeginner) Begin(context.Context) (pgx.Tx, error) { return b.tx, nil }

// notSent is an error pgconn raised before it sent anything.
type notSent struct{}

func (notSent) Error() string     { return "dial: connection refused" }
func (notSent) SafeToRetry() bool { return true }

// TestInWriteTxOutcome: a COMMIT whose connection failed in flight (as
// when PostgreSQL restarts) may have been stored, and says so; the
// server's refusal, an error before anything was sent, or fn's own error
// stored nothing.
func TestInWriteTxOutcome(t *testing.T) {
	fnErr := errors.New("a statement failed")
	for _, tc := range []struct {
		name              string
		fnErr, commitErr  error
		unknown, rollback bool
	}{
		{name: "OK"},
		{name: "FnFails", fnErr: fnErr, rollback: true},
		{name: "ServerRefused", commitErr: &pgconn.PgError{Code: "40001"}},
		{name: "NotSent", commitErr: notSent{}},
		{name: "ConnectionLost", commitErr: io.ErrUnexpectedEOF, unknown: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := &fakeTx{commitErr: tc.commitErr}
			err := inWriteTx(context.Background(), fakeBeginner{tx}, func(pgx.Tx) error { return tc.fnErr })
			if want := tc.fnErr != nil || tc.commitErr != nil; (err != nil) != want {
				t.Fatalf("err = %v", err)
			}
			if got := errors.Is(err, podium.ErrOutcomeUnknown); got != tc.unknown {
				t.Errorf("err = %v: outcome unknown %v, want %v", err, got, tc.unknown)
			}
			if tx.rolledBack != tc.rollback {
				t.Errorf("rolled back %v, want %v", tx.rolledBack, tc.rollback)
			}
		})
	}
}
