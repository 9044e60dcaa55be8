package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Boards lists every board, ordered by id.
func (s *Store) Boards(ctx context.Context) ([]podium.Board, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id, body, created_ms, updated_ms FROM boards ORDER BY id")
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
		if err := b.SetDocument(body); err != nil {
			return nil, fmt.Errorf("boards: board %s: %w", b.ID, err)
		}
		b.CreatedAt, b.UpdatedAt = podium.FromMillis(created), podium.FromMillis(updated)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("boards: %w", err)
	}
	return out, nil
}

// PutBoard creates b or replaces the board with its id, times included,
// and writes parts in the same transaction. It stores b as given;
// validation is the caller's (podium.Board.Normalize).
func (s *Store) PutBoard(ctx context.Context, b *podium.Board, parts ...podium.Part) error {
	return s.PutBoards(ctx, []podium.BoardPut{{Board: b, Parts: parts}})
}

// PutBoards stores several boards, each as PutBoard does, in one
// transaction made durable by one fsync: all of them or none. The ids must
// differ. Grouping the boards made while a commit is on its way is what
// lets creations go past one fsync each (engine: putBoards).
func (s *Store) PutBoards(ctx context.Context, puts []podium.BoardPut) error {
	bodies := make([]string, len(puts))
	seen := make(map[string]bool, len(puts))
	for i, p := range puts {
		if seen[p.Board.ID] {
			return fmt.Errorf("put board: board %q twice in one call", p.Board.ID)
		}
		seen[p.Board.ID] = true
		body, err := p.Board.Document()
		if err != nil {
			return fmt.Errorf("put board: %w", err)
		}
		if err := s.checkParts(p.Parts); err != nil {
			return fmt.Errorf("put board: %w", err)
		}
		bodies[i] = string(body)
	}
	sts, err := s.putBoards(ctx, puts, bodies)
	if err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	for i, st := range sts {
		if st != backfilling {
			continue
		}
		// The board's earlier rows join the player index before it is
		// used (player_index.go); an interrupted backfill resumes at
		// the next Open, so it must not stop with the caller.
		if err := s.backfill(context.WithoutCancel(ctx), puts[i].Board.ID); err != nil {
			return fmt.Errorf("put board: %w", err)
		}
	}
	return s.durable(ctx)
}

// putBoards writes boards' rows, their player index states and parts in
// one transaction and returns those states.
func (s *Store) putBoards(ctx context.Context, puts []podium.BoardPut, bodies []string) ([]indexState, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	put := tx.StmtContext(ctx, s.ws.board)
	sts := make([]indexState, len(puts))
	for i, p := range puts {
		b := p.Board
		if _, err := put.ExecContext(ctx, b.ID, bodies[i], podium.Millis(b.CreatedAt), podium.Millis(b.UpdatedAt)); err != nil {
			return nil, err
		}
		if sts[i], err = s.putBoardIndex(ctx, tx, b); err != nil {
			return nil, err
		}
		if err := writeAllParts(ctx, tx, p.Parts); err != nil {
			return nil, err
		}
	}
	if err := s.commitTx(tx); err != nil {
		return nil, err
	}
	for i, p := range puts {
		s.setIndex(p.Board.ID, sts[i])
	}
	return sts, nil
}

// DeleteBoard removes a board with its entries, its log and its watermark,
// and writes parts, in one transaction. A missing board is
// podium.ECodeBoardNotFound.
func (s *Store) DeleteBoard(ctx context.Context, id string, parts ...podium.Part) error {
	if err := s.checkParts(parts); err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, sqlstore.DeleteBoard.SQLite, id)
	if err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete board: %w", err)
	} else if n == 0 {
		return podium.Errorf(podium.ECodeBoardNotFound, "board %q does not exist", id)
	}
	for _, q := range []string{sqlstore.DeleteBoardEntries.SQLite, sqlstore.DeleteBoardLog.SQLite, sqlstore.DeleteBoardWatermark.SQLite,
		"DELETE FROM player_index_backfill WHERE board = ?", // player_index.go
		sqlstore.DeleteBoardFeed.SQLite, sqlstore.DeleteBoardReviewItems.SQLite,
		sqlstore.ExpireBoardEvidence.SQLite} { // evidence.go: the sweeper deletes it
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("delete board: %w", err)
		}
	}
	if err := deleteTourney(ctx, tx, id); err != nil { // tourney.go
		return fmt.Errorf("delete board: %w", err)
	}
	if err := deleteLeague(ctx, tx, id); err != nil { // league.go
		return fmt.Errorf("delete board: %w", err)
	}
	if err := writeAllParts(ctx, tx, parts); err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	s.setIndex(id, notIndexed)
	return s.durable(ctx)
}

// Players lists every registered player, ordered by id.
func (s *Store) Players(ctx context.Context) ([]podium.Player, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Players.SQLite)
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
		p.Meta = podium.LoadedMeta(meta)
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
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.ExecContext(ctx, sqlstore.PutPlayer.SQLite,
		p.ID, p.Name, p.Hidden, metaArg(p.Meta), podium.Millis(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put player: %w", err)
	}
	return s.durable(ctx)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// metaArg is podium.StoredMeta as a statement argument: NULL or TEXT.
func metaArg(meta json.RawMessage) any {
	if podium.StoredMeta(meta) == nil {
		return nil
	}
	return string(meta)
}

// nullInt scans an INTEGER or NULL column without the reflection that
// database/sql uses for *int64 and sql.NullInt64.
type nullInt struct {
	v     int64
	valid bool
}

// Scan implements sql.Scanner.
func (n *nullInt) Scan(src any) error {
	switch x := src.(type) {
	case int64:
		n.v, n.valid = x, true
	case nil:
		n.v, n.valid = 0, false
	default:
		return fmt.Errorf("integer column holds %T", src)
	}
	return nil
}

var _ sql.Scanner = (*nullInt)(nil)
