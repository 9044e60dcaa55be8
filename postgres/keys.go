package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.KeyStore = (*Store)(nil)

// keyRows is the Store's API keys (podium.KeyStore and the SharedStore's
// LoadKey).
type keyRows struct{ *Store }

// sqlKeys selects API keys.
const sqlKeys = "SELECT id, name, scopes, boards, hash, created_ms FROM api_keys"

// Keys lists the API keys, hashes included, ordered by id. Scopes and
// Boards are empty slices, never nil, when empty.
func (s keyRows) Keys(ctx context.Context) ([]podium.APIKey, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Keys.Postgres)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanKey)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return out, nil
}

// LoadKey returns one API key, hash included, nil if it does not exist
// (revoked).
func (s keyRows) LoadKey(ctx context.Context, id string) (*podium.APIKey, error) {
	rows, err := s.pool.Query(ctx, sqlKeys+" WHERE id = $1", id)
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanKey)
	if err != nil || len(out) == 0 {
		return nil, wrap("load key", err)
	}
	return &out[0], nil
}

func scanKey(r pgx.CollectableRow) (podium.APIKey, error) {
	var (
		k       podium.APIKey
		created int64
	)
	if err := r.Scan(&k.ID, &k.Name, &k.Scopes, &k.Boards, &k.Hash, &created); err != nil {
		return k, err
	}
	k.Scopes, k.Boards = nonNil(k.Scopes), nonNil(k.Boards)
	k.CreatedAt = podium.FromMillis(created)
	return k, nil
}

// PutKey stores k, replacing a key with the same id. A key whose hash
// another key already has is podium.ECodeConflict.
func (s keyRows) PutKey(ctx context.Context, k *podium.APIKey) error {
	var b pgx.Batch
	s.queueChange(&b, podium.ChangeKey, k.ID)
	b.Queue(sqlstore.PutKey.Postgres,
		k.ID, k.Name, nonNil(k.Scopes), nonNil(k.Boards), k.Hash, podium.Millis(k.CreatedAt))
	err := s.pool.SendBatch(ctx, &b).Close()
	if code, constraint := pgCode(err); code == codeUniqueViolation && constraint == "api_keys_hash_unique" {
		return podium.Errorf(podium.ECodeConflict, "another API key has the same secret")
	}
	if err != nil {
		return fmt.Errorf("put key: %w", err)
	}
	return nil
}

// DeleteKey revokes a key. A missing key is podium.ECodeNotFound.
func (s keyRows) DeleteKey(ctx context.Context, id string) error {
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		s.queueChange(&b, podium.ChangeKey, id)
		var n int64
		b.Queue(sqlstore.DeleteKey.Postgres, id).Exec(func(tag pgconn.CommandTag) error {
			n = tag.RowsAffected()
			return nil
		})
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		if n == 0 {
			return podium.Errorf(podium.ECodeNotFound, "API key %q does not exist", id)
		}
		return nil
	})
	if podium.ErrorCode(err) == podium.ECodeNotFound {
		return err
	}
	if err != nil {
		return fmt.Errorf("delete key: %w", err)
	}
	return nil
}
