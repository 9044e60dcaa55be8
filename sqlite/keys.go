package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.KeyStore = (*Store)(nil)

// keyRows is the Store's API keys (podium.KeyStore).
type keyRows struct{ *Store }

// Keys lists the API keys, hashes included, ordered by id.
func (s keyRows) Keys(ctx context.Context) ([]podium.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Keys.SQLite)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	defer rows.Close()
	var out []podium.APIKey
	for rows.Next() {
		var (
			k              podium.APIKey
			scopes, boards []byte
			created        int64
		)
		if err := rows.Scan(&k.ID, &k.Name, &scopes, &boards, &k.Hash, &created); err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		if err := json.Unmarshal(scopes, &k.Scopes); err != nil {
			return nil, fmt.Errorf("keys: key %s: scopes: %w", k.ID, err)
		}
		if err := json.Unmarshal(boards, &k.Boards); err != nil {
			return nil, fmt.Errorf("keys: key %s: boards: %w", k.ID, err)
		}
		k.CreatedAt = podium.FromMillis(created)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return out, nil
}

// PutKey stores k, replacing a key with the same id. A key whose hash
// another key already has is podium.ECodeConflict. Scopes and Boards are
// read back as empty slices, never nil.
func (s keyRows) PutKey(ctx context.Context, k *podium.APIKey) error {
	scopes, err := json.Marshal(nonNil(k.Scopes))
	if err != nil {
		return fmt.Errorf("put key: %w", err)
	}
	boards, err := json.Marshal(nonNil(k.Boards))
	if err != nil {
		return fmt.Errorf("put key: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.ExecContext(ctx, sqlstore.PutKey.SQLite,
		k.ID, k.Name, string(scopes), string(boards), k.Hash, podium.Millis(k.CreatedAt))
	if sqliteCode(err) == codeConstraintUnique {
		return podium.Errorf(podium.ECodeConflict, "another API key has the same secret")
	}
	if err != nil {
		return fmt.Errorf("put key: %w", err)
	}
	return s.durable(ctx)
}

// DeleteKey revokes a key. A missing key is podium.ECodeNotFound.
func (s keyRows) DeleteKey(ctx context.Context, id string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.DeleteKey.SQLite, id)
	if err != nil {
		return fmt.Errorf("delete key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("delete key: %w", err)
	}
	if n == 0 {
		return podium.Errorf(podium.ECodeNotFound, "API key %q does not exist", id)
	}
	return s.durable(ctx)
}
