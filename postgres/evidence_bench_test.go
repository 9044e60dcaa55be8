package postgres

import (
	"context"
	"crypto/rand"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkEvidence1MiB compares the two ways PostgreSQL can hold a 1 MiB
// evidence file (docs/ARCHITECTURE.md "Evidence uploads"): a bytea column
// (what evidence_content uses) against a large object, each written and
// read back in its own transaction. Run with -benchtime=50x.
func BenchmarkEvidence1MiB(b *testing.B) {
	st, _ := openTest(b, Options{})
	ctx := context.Background()
	data := make([]byte, 1<<20)
	rand.Read(data)
	if _, err := st.pool.Exec(ctx, "CREATE TABLE bench_blob (id bigint PRIMARY KEY, data bytea NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	if _, err := st.pool.Exec(ctx, "ALTER TABLE bench_blob ALTER COLUMN data SET STORAGE EXTERNAL"); err != nil {
		b.Fatal(err)
	}
	next := 0 // ids across the runs of the sub-benchmark
	b.Run("bytea/write", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			next++
			if _, err := st.pool.Exec(ctx, "INSERT INTO bench_blob VALUES ($1, $2)", next, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bytea/read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var got []byte
		for range b.N {
			if err := st.pool.QueryRow(ctx, "SELECT data FROM bench_blob WHERE id = 1").Scan(&got); err != nil || len(got) != len(data) {
				b.Fatal(err)
			}
		}
	})
	var oid uint32
	b.Run("largeobject/write", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			err := pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
				los := tx.LargeObjects()
				id, err := los.Create(ctx, 0)
				if err != nil {
					return err
				}
				lo, err := los.Open(ctx, id, pgx.LargeObjectModeWrite)
				if err != nil {
					return err
				}
				if _, err := lo.Write(data); err != nil {
					return err
				}
				oid = id
				return lo.Close()
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("largeobject/read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			err := pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
				los := tx.LargeObjects()
				lo, err := los.Open(ctx, oid, pgx.LargeObjectModeRead)
				if err != nil {
					return err
				}
				got, err := io.ReadAll(lo)
				if err != nil || len(got) != len(data) {
					return err
				}
				return lo.Close()
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	var bytea, lo int64
	st.pool.QueryRow(ctx, "SELECT pg_total_relation_size('bench_blob') / greatest(count(*), 1) FROM bench_blob").Scan(&bytea)
	st.pool.QueryRow(ctx, "SELECT pg_total_relation_size('pg_largeobject') / greatest((SELECT count(*) FROM pg_largeobject_metadata), 1)").Scan(&lo)
	b.Logf("on disk per 1 MiB object: bytea %d bytes, large object %d bytes (pg_largeobject is shared by the whole database)", bytea, lo)
}
