package sqlite

import (
	"context"
	"database/sql"
	"fmt"

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

// write stores the rows inside commit's transaction.
func (p *groupPart) write(ctx context.Context, tx *sql.Tx) error {
	if p.b == nil {
		return nil
	}
	for _, set := range p.b.DeleteSets {
		if _, err := tx.ExecContext(ctx, sqlstore.DeleteGroupSet.SQLite, set); err != nil {
			return fmt.Errorf("groups: %w", err)
		}
	}
	if len(p.b.Changes) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, sqlstore.InsertGroupChange.SQLite)
	if err != nil {
		return fmt.Errorf("groups: %w", err)
	}
	defer st.Close()
	for _, c := range p.b.Changes {
		if _, err := st.ExecContext(ctx, c.Set, c.N, c.Group, c.Player, c.Join, podium.Millis(c.At)); err != nil {
			return fmt.Errorf("groups: %w", err)
		}
	}
	return nil
}

// GroupChanges returns the changes of a set with n above after, by n.
func (s groupRows) GroupChanges(ctx context.Context, set string, after int64) ([]podium.GroupChange, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.GroupChanges.SQLite, set, after)
	if err != nil {
		return nil, fmt.Errorf("group changes: %w", err)
	}
	defer rows.Close()
	var out []podium.GroupChange
	for rows.Next() {
		c := podium.GroupChange{Set: set}
		var at int64
		if err := rows.Scan(&c.N, &c.Group, &c.Player, &c.Join, &at); err != nil {
			return nil, fmt.Errorf("group changes: %w", err)
		}
		c.At = podium.FromMillis(at)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("group changes: %w", err)
	}
	return out, nil
}
