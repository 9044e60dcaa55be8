package sqlstore

import "testing"

func TestDollar(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"DELETE FROM boards WHERE id = ?", "DELETE FROM boards WHERE id = $1"},
		{"UPDATE t SET a = ?, b = ? WHERE c = ? AND d > ?", "UPDATE t SET a = $1, b = $2 WHERE c = $3 AND d > $4"},
		{"SELECT coalesce(idem, '?') FROM t WHERE k = ?", "SELECT coalesce(idem, '?') FROM t WHERE k = $1"},
		{`SELECT "a?" FROM t WHERE x = 'it''s ?' AND y = ?`, `SELECT "a?" FROM t WHERE x = 'it''s ?' AND y = $1`},
	} {
		if got := Dollar(tc.in); got != tc.want {
			t.Errorf("Dollar(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNew: the SQLite text is the statement as written, and PostgreSQL's
// differs only in its placeholders.
func TestNew(t *testing.T) {
	s := New("INSERT INTO t (a, b) VALUES (?, ?)")
	if s.SQLite != "INSERT INTO t (a, b) VALUES (?, ?)" || s.Postgres != "INSERT INTO t (a, b) VALUES ($1, $2)" {
		t.Errorf("New = %+v", s)
	}
}
