// Package sqlstore holds the SQL that the SQLite and PostgreSQL stores
// share: the statements whose text is the same in both dialects once
// PostgreSQL's $1, $2, ... placeholders are written as SQLite's ?.
//
// Each statement is written once, with ? placeholders, and New renders it
// for both dialects when the package is initialised, so that a store pays
// nothing per call: sqlite uses Stmt.SQLite and postgres Stmt.Postgres.
// What the stores run differently stays in each store: how a statement is
// run (database/sql on one write connection, or pgx batches that queue the
// change feed's rows with it), the write path (commit, the scans of
// entries and the log, the shared locking of board heads), and every
// statement whose text differs (docs/ARCHITECTURE.md, "SQL shared between
// the stores").
package sqlstore

import (
	"strconv"
	"strings"
)

// Stmt is one statement in both dialects.
type Stmt struct {
	// SQLite has ? placeholders; Postgres numbers them $1, $2, ... in the
	// order they appear.
	SQLite, Postgres string
}

// New returns the statement q, written with ? placeholders, in both
// dialects.
func New(q string) Stmt {
	return Stmt{SQLite: q, Postgres: Dollar(q)}
}

// Dollar numbers the ? placeholders of q as $1, $2, ..., from left to
// right, leaving a ? inside a quoted string or identifier alone. A
// placeholder used twice is thus two parameters, passed twice, as it is on
// SQLite.
func Dollar(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	var quote byte // the quote character of a string or identifier, 0 outside
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
