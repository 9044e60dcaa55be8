package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/storetest"
)

var ctx = context.Background()

// openTest opens a store on a schema of its own (dropped when t ends) and
// returns it with the schema's connection string. Its sessions are named
// after the schema (application_name), so a test can find them in
// pg_stat_activity.
func openTest(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	dsn, schema := pgtest.Schema(t)
	dsn = pgtest.WithParam(t, dsn, "application_name", schema)
	return openDSN(t, dsn, opts), dsn
}

func openDSN(t testing.TB, dsn string, opts Options) *Store {
	t.Helper()
	s, err := Open(ctx, dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) podium.Store {
		s, _ := openTest(t, Options{})
		return s
	})
}

func board(id string, nkeys int) *podium.Board {
	b := &podium.Board{ID: id, CreatedAt: time.UnixMilli(1_700_000_000_000), UpdatedAt: time.UnixMilli(1_700_000_000_000)}
	for i := range nkeys {
		b.Keys = append(b.Keys, podium.KeyDef{Name: fmt.Sprintf("k%d", i+1), Order: podium.Desc})
	}
	if err := b.Normalize(); err != nil {
		panic(err)
	}
	return b
}

// scores returns a batch of n scores on board b, seqs from first on: a log
// row and an entry upsert each.
func scores(b string, first uint64, n int) *podium.Batch {
	var batch podium.Batch
	at := time.UnixMilli(1_700_000_000_000)
	for i := range n {
		seq := first + uint64(i)
		p := fmt.Sprintf("p%06d", seq)
		batch.Submissions = append(batch.Submissions, podium.Submission{Seq: seq, Board: b, Period: "all", Player: p, Keys: []int64{int64(seq), -int64(seq)}, At: at})
		batch.Upserts = append(batch.Upserts, podium.Entry{Board: b, Period: "all", Player: p, Keys: []int64{int64(seq), -int64(seq)}, At: at, Seq: seq})
	}
	return &batch
}

func countEntries(t *testing.T, s *Store, b string) int {
	t.Helper()
	n := 0
	if err := s.LoadEntries(ctx, b, "all", func(*podium.Entry) error { n++; return nil }); err != nil {
		t.Fatalf("LoadEntries: %v", err)
	}
	return n
}

func countLog(t *testing.T, s *Store, b string) int {
	t.Helper()
	n := 0
	if err := s.Log(ctx, b, 0, func(*podium.Submission) error { n++; return nil }); err != nil {
		t.Fatalf("Log: %v", err)
	}
	return n
}

func lastSeq(t *testing.T, s *Store, b string) uint64 {
	t.Helper()
	seq, err := s.LastSeq(ctx, b)
	if err != nil {
		t.Fatalf("LastSeq: %v", err)
	}
	return seq
}
