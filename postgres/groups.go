package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Groups (podium.GroupStore): the membership changes of group sets
// (migration 0150).

var _ podium.GroupStore = (*Store)(nil)

// groupRows is the Store's group memberships (podium.GroupStore).
type groupRows struct{ *Store }

// GroupPart returns b as a part of a batch this store commits.
func (s groupRows) GroupPart(b *podium.GroupBatch) podium.Part { return &groupPart{s.Store, b} }

// groupPart is the membership changes of a commit, or the removal of a
// deleted set's.
type groupPart struct {
	s *Store
	b *podium.GroupBatch
}

func (p *groupPart) Len() int       { return p.b.Len() }
func (p *groupPart) Check() error   { return nil }
func (p *groupPart) madeBy() *Store { return p.s }

// queue queues the rows: the changes as one JSON parameter (one
// statement however many).
func (p *groupPart) queue(w *writer, pb *pgconn.Batch, _ *statements) {
	if p.b == nil {
		return
	}
	for _, set := range p.b.DeleteSets {
		pb.ExecParams(sqlstore.DeleteGroupSet.Postgres, [][]byte{[]byte(set)}, nil, nil, nil)
		w.queued++
	}
	if len(p.b.Changes) == 0 {
		return
	}
	type row struct {
		S string `json:"s"`
		N int64  `json:"n"`
		G string `json:"g"`
		P string `json:"p"`
		J bool   `json:"j"`
		T int64  `json:"t"`
	}
	rows := make([]row, len(p.b.Changes))
	for i, c := range p.b.Changes {
		rows[i] = row{c.Set, c.N, c.Group, c.Player, c.Join, podium.Millis(c.At)}
	}
	w.jsonRows(pb, `INSERT INTO group_changes (set_board, n, grp, player, joined, at_ms)
		SELECT s, n, g, p, j, t FROM jsonb_to_recordset($1::jsonb) AS x(s text, n bigint, g text, p text, j boolean, t bigint)`, rows)
}

// GroupChanges returns the changes of a set with n above after, by n.
func (s groupRows) GroupChanges(ctx context.Context, set string, after int64) ([]podium.GroupChange, error) {
	rows, err := s.pool.Query(ctx, sqlstore.GroupChanges.Postgres, set, after)
	if err != nil {
		return nil, fmt.Errorf("group changes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.GroupChange, error) {
		c := podium.GroupChange{Set: set}
		var at int64
		err := r.Scan(&c.N, &c.Group, &c.Player, &c.Join, &at)
		c.At = podium.FromMillis(at)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("group changes: %w", err)
	}
	return out, nil
}
