package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// testWithinBatch pins down rows that meet inside one batch: a batch must
// leave what storing its rows one by one, in the documented order, would
// leave. (A store that writes a batch as set-based statements cannot
// update one row twice in a statement, so it has to merge such rows
// itself.)
func testWithinBatch(t *testing.T, open func(*testing.T) podium.Store) {
	rec := func(key string, status int, body string, created int64) podium.IdempotencyRecord {
		return podium.IdempotencyRecord{Scope: "k1 POST /v1/scores", Key: key, RequestHash: []byte("h-" + key), Status: status, Body: []byte(body), CreatedAt: at(created)}
	}
	t.Run("Idempotency", func(t *testing.T) {
		s := open(t)
		// "stored" already has a marker; the batch brings another marker
		// and then its answer.
		commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{rec("stored", 0, "", 0)}})
		marker, answer := rec("new", 0, "", 1), rec("new", 201, `{"n":1}`, 2)
		second := rec("new", 500, `{"n":"again"}`, 3)
		answered, twice := rec("answered", 200, `{"first":true}`, 4), rec("answered", 200, `{"first":false}`, 5)
		commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{
			marker, answer, second, answered, twice, rec("stored", 0, "", 6), rec("stored", 202, `{"late":1}`, 7),
		}})
		got, err := s.IdempotencyRecords(ctx, time.Time{})
		if err != nil {
			t.Fatalf("IdempotencyRecords: %v", err)
		}
		// The first record of a key is what is kept (its hash and time),
		// with the first answer that came after a marker.
		wantStored := rec("stored", 202, `{"late":1}`, 0)
		wantNew := marker
		wantNew.Status, wantNew.Body = answer.Status, answer.Body
		checkRecords(t, got, []podium.IdempotencyRecord{wantStored, wantNew, answered})
	})
	t.Run("Watermarks", func(t *testing.T) {
		s := open(t)
		commit(t, s, &podium.Batch{Watermarks: []podium.Watermark{{Board: "b", Seq: 5}, {Board: "c", Seq: 1}, {Board: "b", Seq: 3}}})
		if wm := watermarks(t, s); !reflect.DeepEqual(wm, map[string]uint64{"b": 3, "c": 1}) {
			t.Errorf("watermarks = %v, want the later of each board: b 3, c 1", wm)
		}
	})
	// A batch that logs one (board, seq) twice fails whole, even though
	// neither row was logged before it.
	t.Run("DuplicateSeq", func(t *testing.T) {
		s := open(t)
		bd := putBoard(t, s, "b", podium.Never, 1)
		before := &podium.Batch{Submissions: []podium.Submission{sub(bd, 1, "all", "a", 5)}, Upserts: []podium.Entry{entry(bd, 1, "all", "a", 5)}}
		commit(t, s, before)
		bad := &podium.Batch{
			Submissions: []podium.Submission{sub(bd, 2, "all", "b", 6), sub(bd, 3, "all", "c", 7), sub(bd, 2, "all", "d", 8)},
			Upserts:     []podium.Entry{entry(bd, 2, "all", "b", 6), entry(bd, 3, "all", "c", 7)},
			Watermarks:  []podium.Watermark{{Board: "b", Seq: 3}},
			Idempotency: []podium.IdempotencyRecord{rec("k", 200, "{}", 0)},
		}
		if err := s.Commit(ctx, bad); err == nil {
			t.Fatal("Commit of a batch logging one (board, seq) twice succeeded")
		}
		checkUnchanged(t, s, bd, before)
		if wm := watermarks(t, s); len(wm) != 0 {
			t.Errorf("a failed commit moved watermarks: %v", wm)
		}
	})
}
