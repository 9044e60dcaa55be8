package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// sqlBoards selects boards with their generation, which lives in the
// head row.
const sqlBoards = `SELECT b.id, b.body, b.created_ms, b.updated_ms, coalesce(h.gen, 0)
	FROM boards b LEFT JOIN board_heads h ON h.board = b.id`

// Boards lists every board, ordered by id.
func (s *Store) Boards(ctx context.Context) ([]podium.Board, error) {
	rows, err := s.pool.Query(ctx, sqlBoards+" ORDER BY b.id")
	if err != nil {
		return nil, fmt.Errorf("boards: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanBoard)
	if err != nil {
		return nil, fmt.Errorf("boards: %w", err)
	}
	return out, nil
}

// LoadBoard returns one board, nil if it does not exist.
func (s *Store) LoadBoard(ctx context.Context, id string) (*podium.Board, error) {
	rows, err := s.pool.Query(ctx, sqlBoards+" WHERE b.id = $1", id)
	if err != nil {
		return nil, fmt.Errorf("load board: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanBoard)
	if err != nil || len(out) == 0 {
		return nil, wrap("load board", err)
	}
	return &out[0], nil
}

func scanBoard(r pgx.CollectableRow) (podium.Board, error) {
	var (
		b                podium.Board
		body             []byte
		created, updated int64
		gen              int64
	)
	if err := r.Scan(&b.ID, &body, &created, &updated, &gen); err != nil {
		return b, err
	}
	if err := b.SetDocument(body); err != nil {
		return b, fmt.Errorf("board %s: %w", b.ID, err)
	}
	b.CreatedAt, b.UpdatedAt = podium.FromMillis(created), podium.FromMillis(updated)
	b.Gen = uint64(gen)
	return b, nil
}

// wrap returns nil for nil, else err with context.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// boardJSON is what the boards.body column holds for b.
func boardJSON(b *podium.Board) (string, error) {
	body, err := b.Document()
	return string(body), err
}

// The statements that write a board. A board's head row exists from its
// creation to its deletion, and carries its generation.
const (
	// sqlNewHead creates the head of a new board, with a new generation.
	sqlNewHead = `INSERT INTO board_heads (board, seq) VALUES ($1, 0)`
	// sqlNewGen gives a board a new generation when its keys' names or
	// orders, its mode or its reset change ($2 is the new body): what a
	// node built under the old definition cannot be kept. A key's label,
	// format or bounds do not rank, so changing them keeps the generation.
	sqlNewGen = `UPDATE board_heads h SET gen = nextval('board_gen') FROM boards b
		WHERE h.board = $1 AND b.id = $1
		AND ((SELECT jsonb_agg(jsonb_build_array(k -> 'name', k -> 'order')) FROM jsonb_array_elements(b.body::jsonb -> 'keys') k),
			b.body::jsonb -> 'mode', b.body::jsonb -> 'reset')
			IS DISTINCT FROM
			((SELECT jsonb_agg(jsonb_build_array(k -> 'name', k -> 'order')) FROM jsonb_array_elements($2::jsonb -> 'keys') k),
			$2::jsonb -> 'mode', $2::jsonb -> 'reset')
		RETURNING h.gen`
)

// PutBoard creates b or replaces the board with its id, times included,
// and sets b.Gen: a new board gets a new generation, and so does a board
// whose keys, mode or reset change. It stores b as given; validation is
// the caller's (podium.Board.Normalize). The head, the change feed and the
// board are written in one transaction, one round trip; parts, if any, in
// the same transaction, after them.
func (s *Store) PutBoard(ctx context.Context, b *podium.Board, parts ...podium.Part) error {
	body, err := boardJSON(b)
	if err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	if err := s.checkParts(parts); err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	var batch pgx.Batch
	// The head first, as every writer of a board takes it first.
	batch.Queue(sqlNewHead+" ON CONFLICT (board) DO NOTHING", b.ID)
	batch.Queue(sqlNewGen, b.ID, body)
	s.queueChange(&batch, podium.ChangeBoard, b.ID)
	batch.Queue(sqlstore.PutBoard.Postgres, b.ID, body, podium.Millis(b.CreatedAt), podium.Millis(b.UpdatedAt))
	var gen int64
	batch.Queue("SELECT gen FROM board_heads WHERE board = $1", b.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&gen) })
	if len(parts) == 0 {
		err = s.pool.SendBatch(ctx, &batch).Close()
	} else {
		err = inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
			if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
				return err
			}
			return s.writeParts(ctx, tx, parts)
		})
	}
	if err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	b.Gen = uint64(gen)
	return nil
}

// queueDeleteBoard queues what deletes a board, after its change: the
// board, its head, log, entries and watermark. The first statement is the
// board's delete, whose row count says whether it existed.
func queueDeleteBoard(b *pgx.Batch, id string) {
	for _, q := range []string{
		sqlstore.DeleteBoard.Postgres,
		"DELETE FROM board_heads WHERE board = $1",
		sqlstore.DeleteBoardLog.Postgres,
		sqlstore.DeleteBoardEntries.Postgres,
		sqlstore.DeleteBoardWatermark.Postgres,
		sqlstore.DeleteBoardFeed.Postgres,
		sqlstore.ExpireBoardEvidence.Postgres, // evidence.go: the sweeper deletes it
	} {
		b.Queue(q, id)
	}
	for _, q := range tourneyDeletes { // tourney.go
		b.Queue(q, id)
	}
	for _, q := range leagueDeletes { // league.go
		b.Queue(q, id)
	}
	b.Queue(sqlstore.DeleteBoardReviewItems.Postgres, id) // a board made again starts with no review queue
}

// DeleteBoard removes a board with its head, entries, log and watermark,
// and writes parts, in one transaction. A missing board is
// podium.ECodeBoardNotFound.
func (s *Store) DeleteBoard(ctx context.Context, id string, parts ...podium.Part) error {
	if err := s.checkParts(parts); err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		// The head first: the row that writers of the board lock.
		b.Queue("SELECT FROM board_heads WHERE board = $1 FOR UPDATE", id)
		s.queueChange(&b, podium.ChangeBoard, id)
		var found bool
		b.Queue("SELECT EXISTS (SELECT FROM boards WHERE id = $1)", id).QueryRow(func(r pgx.Row) error { return r.Scan(&found) })
		queueDeleteBoard(&b, id)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		if !found {
			return podium.Errorf(podium.ECodeBoardNotFound, "board %q does not exist", id)
		}
		return s.writeParts(ctx, tx, parts)
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
	rows, err := s.pool.Query(ctx, sqlstore.Players.Postgres)
	if err != nil {
		return nil, fmt.Errorf("players: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanPlayer)
	if err != nil {
		return nil, fmt.Errorf("players: %w", err)
	}
	return out, nil
}

// PutPlayer creates p or replaces the player with its id.
func (s *Store) PutPlayer(ctx context.Context, p *podium.Player) error {
	var b pgx.Batch
	s.queueChange(&b, podium.ChangePlayer, p.ID)
	b.Queue(sqlstore.PutPlayer.Postgres,
		p.ID, p.Name, p.Hidden, metaArg(p.Meta), podium.Millis(p.UpdatedAt))
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("put player: %w", err)
	}
	return nil
}

// LoadPlayer returns one registered player, nil if it is not registered.
func (s *Store) LoadPlayer(ctx context.Context, id string) (*podium.Player, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, name, hidden, meta, updated_ms FROM players WHERE id = $1", id)
	if err != nil {
		return nil, fmt.Errorf("load player: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanPlayer)
	if err != nil || len(out) == 0 {
		return nil, wrap("load player", err)
	}
	return &out[0], nil
}

func scanPlayer(r pgx.CollectableRow) (podium.Player, error) {
	var (
		p       podium.Player
		meta    []byte
		updated int64
	)
	if err := r.Scan(&p.ID, &p.Name, &p.Hidden, &meta, &updated); err != nil {
		return p, err
	}
	p.Meta = podium.LoadedMeta(meta)
	p.UpdatedAt = podium.FromMillis(updated)
	return p, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// metaArg is podium.StoredMeta as a statement argument: NULL or text.
func metaArg(meta json.RawMessage) any {
	if podium.StoredMeta(meta) == nil {
		return nil
	}
	return string(meta)
}
