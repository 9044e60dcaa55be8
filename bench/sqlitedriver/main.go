// Command sqlitedriver compares the two SQLite drivers podium could use, the
// pure-Go modernc.org/sqlite and the cgo github.com/mattn/go-sqlite3, on the
// shapes of podium's storage work:
//
//   - commit1: one score per transaction (one log row plus one entry upsert),
//   - commit1000: 1000 scores per transaction, row at a time and in
//     multi-row INSERTs of 64 rows, from a hot set of 1000 players and
//     spread over 100k players (every upsert on another page),
//   - scan: reading every entry of a 1M-entry board, as at start-up,
//
// with synchronous=FULL and synchronous=NORMAL in WAL mode. It is its own
// module so that mattn (and cgo) never enters podium's go.mod.
//
//	cd bench/sqlitedriver && go run .
//	go run . -entries 200000 -dur 1s   # quicker
//
// The schema and statements mirror sqlite/migrations/0001_init.sql and
// sqlite/commit.go and sqlite/read.go in the parent module; keep them in
// step. Run it on an otherwise idle machine: numbers move with load.
package main

import (
	"context"
	"database/sql"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3"
	_ "modernc.org/sqlite"          // registers "sqlite"
)

const schema = `
CREATE TABLE IF NOT EXISTS submissions (
	board TEXT NOT NULL, seq INTEGER NOT NULL, period TEXT NOT NULL, player TEXT NOT NULL,
	kind INTEGER NOT NULL, k1 INTEGER, k2 INTEGER, k3 INTEGER, k4 INTEGER,
	at INTEGER NOT NULL, meta TEXT,
	PRIMARY KEY (board, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
	board TEXT NOT NULL, period TEXT NOT NULL, player TEXT NOT NULL,
	rec BLOB NOT NULL, meta TEXT,
	PRIMARY KEY (board, period, player)
) STRICT, WITHOUT ROWID;`

const (
	subCols   = "(board, seq, period, player, kind, k1, k2, k3, k4, at, meta)"
	subRow    = "(?,?,?,?,?,?,?,?,?,?,?)"
	entryCols = "(board, period, player, rec, meta)"
	entryRow  = "(?,?,?,?,?)"
	upsertEnd = " ON CONFLICT (board, period, player) DO UPDATE SET rec = excluded.rec, meta = excluded.meta"
)

func insertSubs(n int) string {
	return "INSERT INTO submissions " + subCols + " VALUES " + strings.TrimSuffix(strings.Repeat(subRow+",", n), ",")
}

func upsertEntries(n int) string {
	return "INSERT INTO entries " + entryCols + " VALUES " + strings.TrimSuffix(strings.Repeat(entryRow+",", n), ",") + upsertEnd
}

type driverDef struct{ label, name string }

var drivers = []driverDef{{"modernc", "sqlite"}, {"mattn", "sqlite3"}}

// dsn uses the parameter names both drivers understand.
func dsn(path, sync string) string {
	return "file:" + path + "?_busy_timeout=5000&_journal_mode=WAL&_synchronous=" + sync + "&_txlock=immediate"
}

type bench struct {
	db       *sql.DB
	seq      int64
	players  int
	rng      *rand.Rand
	subStmt  map[int]*sql.Stmt
	entStmt  map[int]*sql.Stmt
	argsSub  []any
	argsEnt  []any
	recs     []byte
	playerID []string
}

func openBench(drv driverDef, path, sync string, players int) (*bench, error) {
	db, err := sql.Open(drv.name, dsn(path, sync))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	// The tuning of podium's write connection (sqlite/sqlite.go).
	for _, p := range []string{"cache_size(-65536)", "temp_store(memory)", "wal_autocheckpoint(10000)"} {
		if _, err := db.Exec("PRAGMA " + strings.Replace(strings.Replace(p, "(", " = ", 1), ")", "", 1)); err != nil {
			return nil, err
		}
	}
	if _, err := db.Exec(schema); err != nil {
		return nil, err
	}
	b := &bench{db: db, players: players, rng: rand.New(rand.NewPCG(1, 2)),
		subStmt: map[int]*sql.Stmt{}, entStmt: map[int]*sql.Stmt{}}
	b.playerID = make([]string, players)
	for i := range b.playerID {
		b.playerID[i] = fmt.Sprintf("player-%07d", i)
	}
	return b, nil
}

func (b *bench) stmts(n int) (*sql.Stmt, *sql.Stmt, error) {
	if s, ok := b.subStmt[n]; ok {
		return s, b.entStmt[n], nil
	}
	s, err := b.db.Prepare(insertSubs(n))
	if err != nil {
		return nil, nil, err
	}
	e, err := b.db.Prepare(upsertEntries(n))
	if err != nil {
		return nil, nil, err
	}
	b.subStmt[n], b.entStmt[n] = s, e
	return s, e, nil
}

// commit writes scores submissions in one transaction, rowsPer rows per
// INSERT statement (the remainder row at a time).
func (b *bench) commit(scores, rowsPer int) error {
	tx, err := b.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UnixMilli()
	for done := 0; done < scores; {
		n := rowsPer
		if scores-done < n {
			n = 1
		}
		ss, es := b.subStmt[n], b.entStmt[n]
		b.argsSub, b.argsEnt, b.recs = b.argsSub[:0], b.argsEnt[:0], b.recs[:0]
		for range n {
			b.seq++
			p := b.playerID[b.rng.IntN(b.players)]
			k1, k2 := b.rng.Int64N(1_000_000), b.rng.Int64N(1000)
			start := len(b.recs)
			b.recs = appendRec(b.recs, now, b.seq, k1, k2)
			b.argsSub = append(b.argsSub, "bench", b.seq, "all", p, 0, k1, k2, nil, nil, now, nil)
			b.argsEnt = append(b.argsEnt, "bench", "all", p, b.recs[start:len(b.recs):len(b.recs)], nil)
		}
		if _, err := tx.Stmt(ss).Exec(b.argsSub...); err != nil {
			return err
		}
		if _, err := tx.Stmt(es).Exec(b.argsEnt...); err != nil {
			return err
		}
		done += n
	}
	return tx.Commit()
}

// fill gives the board n entries, one per player, quickly.
func (b *bench) fill(n int) error {
	tx, err := b.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	const per = 100
	st, err := tx.Prepare(upsertEntries(per))
	if err != nil {
		return err
	}
	args := make([]any, 0, per*5)
	for i := 0; i < n; i += per {
		args = args[:0]
		for j := i; j < i+per; j++ {
			rec := appendRec(nil, int64(1.7e12)+int64(j), int64(j+1), rand.Int64N(1e9), rand.Int64N(1000))
			args = append(args, "scan", "all", fmt.Sprintf("player-%07d", j), rec, nil)
		}
		if _, err := st.Exec(args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// scan reads a board the way sqlite.Store.LoadEntries does.
func (b *bench) scan() (int, error) {
	rows, err := b.db.QueryContext(context.Background(),
		"SELECT player, rec, meta FROM entries WHERE board = ? AND period = ?", "scan", "all")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		player    string
		rec, meta sql.RawBytes
		n         int
		sum       int64
		keys      = make([]int64, 0, 4)
	)
	dest := []any{&player, &rec, &meta}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, err
		}
		at, i := binary.Varint(rec)
		seq, j := binary.Uvarint(rec[i:])
		keys = keys[:0]
		for r := rec[i+j:]; len(r) > 0; {
			k, m := binary.Varint(r)
			if m <= 0 {
				return 0, fmt.Errorf("bad rec %x", rec)
			}
			keys = append(keys, k)
			r = r[m:]
		}
		sum += at + int64(seq) + keys[0] + int64(len(player)+len(meta))
		n++
	}
	_ = sum
	return n, rows.Err()
}

// appendRec is sqlite's entries.rec encoding: varints of at, seq, keys.
func appendRec(b []byte, at, seq int64, keys ...int64) []byte {
	b = binary.AppendVarint(b, at)
	b = binary.AppendUvarint(b, uint64(seq))
	for _, k := range keys {
		b = binary.AppendVarint(b, k)
	}
	return b
}

func timed(dur time.Duration, minIter int, f func() error) (iters int, elapsed time.Duration, err error) {
	start := time.Now()
	for iters < minIter || time.Since(start) < dur {
		if err := f(); err != nil {
			return iters, time.Since(start), err
		}
		iters++
	}
	return iters, time.Since(start), nil
}

func main() {
	dur := flag.Duration("dur", 2*time.Second, "how long to run each commit case")
	entries := flag.Int("entries", 1_000_000, "entries on the board for the scan case")
	players := flag.Int("players", 100_000, "distinct players of the spread cases (the hot cases use 1000)")
	dir := flag.String("dir", "", "directory for the databases (default: a temporary directory)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "sqlitedriver-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "driver\tsync\tcase\ttx/s\tscores/s\trows/s\t")
	for _, drv := range drivers {
		for _, sync := range []string{"FULL", "NORMAL"} {
			path := filepath.Join(*dir, drv.label+"-"+sync+".db")
			b, err := openBench(drv, path, sync, *players)
			if err != nil {
				log.Fatalf("%s %s: %v", drv.label, sync, err)
			}
			for _, c := range []struct {
				name                     string
				scores, rowsPer, players int
			}{
				{"commit1", 1, 1, *players},
				{"commit1000 hot 1 row/stmt", 1000, 1, 1000},
				{"commit1000 hot 64 rows/stmt", 1000, 64, 1000},
				{"commit1000 spread 1 row/stmt", 1000, 1, *players},
				{"commit1000 spread 64 rows/stmt", 1000, 64, *players},
			} {
				b.players = c.players
				// Prepare outside the transaction: the pool has one connection.
				for _, n := range []int{1, c.rowsPer} {
					if _, _, err := b.stmts(n); err != nil {
						log.Fatalf("%s %s prepare: %v", drv.label, sync, err)
					}
				}
				// A warm-up so that the file has grown.
				if err := b.commit(c.scores, c.rowsPer); err != nil {
					log.Fatalf("%s %s %s: %v", drv.label, sync, c.name, err)
				}
				n, el, err := timed(*dur, 3, func() error { return b.commit(c.scores, c.rowsPer) })
				if err != nil {
					log.Fatalf("%s %s %s: %v", drv.label, sync, c.name, err)
				}
				tps := float64(n) / el.Seconds()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t\n", drv.label, sync, c.name, tps, tps*float64(c.scores), 2*tps*float64(c.scores))
				tw.Flush()
			}
			if sync == "NORMAL" {
				if err := b.fill(*entries); err != nil {
					log.Fatalf("%s fill: %v", drv.label, err)
				}
				best := time.Duration(1 << 62)
				for range 3 {
					start := time.Now()
					n, err := b.scan()
					if err != nil {
						log.Fatalf("%s scan: %v", drv.label, err)
					}
					if n != *entries {
						log.Fatalf("%s scan: %d rows, want %d", drv.label, n, *entries)
					}
					best = min(best, time.Since(start))
				}
				fmt.Fprintf(tw, "%s\t\t%s\t\t\t%.0f\t\n", drv.label, fmt.Sprintf("scan %d entries: %v", *entries, best.Round(time.Millisecond)), float64(*entries)/best.Seconds())
				tw.Flush()
			}
			b.db.Close()
		}
	}
	tw.Flush()
}
