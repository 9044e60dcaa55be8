package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
)

// boardBody is what the boards.body JSON column holds: the board without its
// id and times, which are columns.
type boardBody struct {
	Title  string          `json:"title"`
	Keys   []podium.KeyDef `json:"keys"`
	Mode   podium.Mode     `json:"mode"`
	Reset  podium.Reset    `json:"reset"`
	Public bool            `json:"public"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

// Boards lists every board, ordered by id.
func (s *Store) Boards(ctx context.Context) ([]podium.Board, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, body, created_ms, updated_ms FROM boards ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("boards: %w", err)
	}
	defer rows.Close()
	var out []podium.Board
	for rows.Next() {
		var (
			b                podium.Board
			body             []byte
			created, updated int64
		)
		if err := rows.Scan(&b.ID, &body, &created, &updated); err != nil {
			return nil, fmt.Errorf("boards: %w", err)
		}
		var bb boardBody
		if err := json.Unmarshal(body, &bb); err != nil {
			return nil, fmt.Errorf("boards: board %s: %w", b.ID, err)
		}
		b.Title, b.Keys, b.Mode, b.Reset, b.Public = bb.Title, bb.Keys, bb.Mode, bb.Reset, bb.Public
		b.Meta = metaOut(bb.Meta)
		b.CreatedAt, b.UpdatedAt = podium.FromMillis(created), podium.FromMillis(updated)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("boards: %w", err)
	}
	return out, nil
}

// PutBoard creates b or replaces the board with its id, times included. It
// stores b as given; validation is the caller's (podium.Board.Normalize).
func (s *Store) PutBoard(ctx context.Context, b *podium.Board) error {
	body, err := json.Marshal(boardBody{
		Title: b.Title, Keys: b.Keys, Mode: b.Mode, Reset: b.Reset, Public: b.Public,
		Meta: metaIn(b.Meta),
	})
	if err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO boards (id, body, created_ms, updated_ms) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET body = excluded.body, created_ms = excluded.created_ms, updated_ms = excluded.updated_ms`,
		b.ID, string(body), podium.Millis(b.CreatedAt), podium.Millis(b.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	return nil
}

// DeleteBoard removes a board with its head, entries, log and watermark, in
// one transaction. A missing board is podium.ECodeBoardNotFound.
func (s *Store) DeleteBoard(ctx context.Context, id string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM boards WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return podium.Errorf(podium.ECodeBoardNotFound, "board %q does not exist", id)
		}
		// The head first: the row that writers of the board lock.
		var b pgx.Batch
		for _, q := range []string{
			"DELETE FROM board_heads WHERE board = $1",
			"DELETE FROM submissions WHERE board = $1",
			"DELETE FROM entries WHERE board = $1",
			"DELETE FROM watermarks WHERE board = $1",
		} {
			b.Queue(q, id)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if podium.ErrorCode(err) == podium.ECodeBoardNotFound {
		return err
	}
	if err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	return nil
}

// Players lists every registered player, ordered by id.
func (s *Store) Players(ctx context.Context) ([]podium.Player, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, name, hidden, meta, updated_ms FROM players ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("players: %w", err)
	}
	defer rows.Close()
	var out []podium.Player
	for rows.Next() {
		var (
			p       podium.Player
			meta    []byte
			updated int64
		)
		if err := rows.Scan(&p.ID, &p.Name, &p.Hidden, &meta, &updated); err != nil {
			return nil, fmt.Errorf("players: %w", err)
		}
		p.Meta = metaOut(meta)
		p.UpdatedAt = podium.FromMillis(updated)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("players: %w", err)
	}
	return out, nil
}

// PutPlayer creates p or replaces the player with its id.
func (s *Store) PutPlayer(ctx context.Context, p *podium.Player) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO players (id, name, hidden, meta, updated_ms) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, hidden = excluded.hidden, meta = excluded.meta, updated_ms = excluded.updated_ms`,
		p.ID, p.Name, p.Hidden, metaArg(p.Meta), podium.Millis(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put player: %w", err)
	}
	return nil
}

// Keys lists the API keys, hashes included, ordered by id. Scopes and
// Boards are empty slices, never nil, when empty.
func (s *Store) Keys(ctx context.Context) ([]podium.APIKey, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, name, scopes, boards, hash, created_ms FROM api_keys ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	defer rows.Close()
	var out []podium.APIKey
	for rows.Next() {
		var (
			k       podium.APIKey
			created int64
		)
		if err := rows.Scan(&k.ID, &k.Name, &k.Scopes, &k.Boards, &k.Hash, &created); err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		k.Scopes, k.Boards = nonNil(k.Scopes), nonNil(k.Boards)
		k.CreatedAt = podium.FromMillis(created)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return out, nil
}

// PutKey stores k, replacing a key with the same id. A key whose hash
// another key already has is podium.ECodeConflict.
func (s *Store) PutKey(ctx context.Context, k *podium.APIKey) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO api_keys (id, name, scopes, boards, hash, created_ms) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, scopes = excluded.scopes, boards = excluded.boards,
			hash = excluded.hash, created_ms = excluded.created_ms`,
		k.ID, k.Name, nonNil(k.Scopes), nonNil(k.Boards), k.Hash, podium.Millis(k.CreatedAt))
	if code, constraint := pgCode(err); code == codeUniqueViolation && constraint == "api_keys_hash_unique" {
		return podium.Errorf(podium.ECodeConflict, "another API key has the same secret")
	}
	if err != nil {
		return fmt.Errorf("put key: %w", err)
	}
	return nil
}

// DeleteKey revokes a key. A missing key is podium.ECodeNotFound.
func (s *Store) DeleteKey(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM api_keys WHERE id = $1", id)
	if err != nil {
		return fmt.Errorf("delete key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return podium.Errorf(podium.ECodeNotFound, "API key %q does not exist", id)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// metaIn returns meta as stored: nil for an absent, null or empty object.
func metaIn(meta json.RawMessage) json.RawMessage {
	if isEmptyMeta(meta) {
		return nil
	}
	return meta
}

// metaArg is metaIn as a statement argument: NULL or text.
func metaArg(meta json.RawMessage) any {
	if isEmptyMeta(meta) {
		return nil
	}
	return string(meta)
}

func isEmptyMeta(meta []byte) bool {
	switch string(meta) {
	case "", "null", "{}":
		return true
	}
	return false
}

// metaOut returns stored meta as read back: {} for NULL. raw must not be
// reused by the caller.
func metaOut(raw []byte) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(raw)
}
