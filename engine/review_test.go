package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/review"
)

// rv is the engine's review module (review/), which moderation moved to.
func (e *env) rv() *review.Module {
	e.t.Helper()
	for _, m := range e.eng.Modules() {
		if r, ok := m.(*review.Module); ok {
			return r
		}
	}
	e.t.Fatal("no review module")
	return nil
}

func (e *env) review(id string, r *podium.Review) {
	e.t.Helper()
	none := podium.Review{Hold: podium.HoldNone}
	if r == nil {
		r = &none
	}
	if _, _, err := e.eng.UpdateBoard(context.Background(), &podium.BoardUpdate{ID: id, Review: r}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) held(res engine.Result, reason string) string {
	e.t.Helper()
	if res.Held == nil {
		e.t.Fatalf("%s %v was applied (seq %d), want it held (%s)", res.Player, res.Entry.Keys, res.Seq, reason)
	}
	if res.Held.Reason != reason || res.Seq != 0 {
		e.t.Fatalf("held for %q with seq %d, want %q and no seq", res.Held.Reason, res.Seq, reason)
	}
	return res.Held.ID
}

func (e *env) applied(res engine.Result) {
	e.t.Helper()
	if res.Held != nil {
		e.t.Fatalf("%s was held (%s), want it applied", res.Player, res.Held.Reason)
	}
}

func (e *env) checkIndexes() {
	e.t.Helper()
	diffs, err := e.eng.Checker().Indexes(context.Background())
	if err != nil || len(diffs) > 0 {
		e.t.Fatalf("check: %v %v", diffs, err)
	}
}

// A held score is stored but not ranked; approval ranks it with a new seq
// and the approval's time; a second decision is a conflict; rejection
// keeps the entry the player had; all of it survives a restart, and the
// indexes still match the log.
func TestReviewHoldApproveReject(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("b", podium.Best, podium.Never, desc("points"))
	e.applied(e.submit("b", "alice", 100))
	e.review("b", &podium.Review{Hold: podium.HoldAll})

	e.clock.Set(e.clock.Now().Add(time.Second))
	id := e.held(e.submit("b", "bob", 500), podium.HoldAll)
	eq(t, e.top("b", ""), []string{"1:alice:[100]"})
	lowID := e.held(e.submit("b", "alice", 900), podium.HoldAll)

	e.clock.Set(e.clock.Now().Add(time.Minute))
	it, res, err := e.rv().Approve(ctx, id, "admin", "looks fine")
	if err != nil {
		t.Fatal(err)
	}
	if it.Status != podium.ReviewApproved || it.Seq != res.Seq || res.Seq != 2 || it.DecidedBy != "admin" || it.Note != "looks fine" {
		t.Fatalf("approved item %+v, result seq %d", it, res.Seq)
	}
	if !res.Entry.At.Equal(e.clock.Now()) || res.Entry.Rank != 1 {
		t.Errorf("approved entry at %v rank %d, want the approval's time %v and rank 1", res.Entry.At, res.Entry.Rank, e.clock.Now())
	}
	eq(t, e.top("b", ""), []string{"1:bob:[500]", "2:alice:[100]"})
	if _, _, err := e.rv().Approve(ctx, id, "admin", ""); !errors.Is(err, podium.ErrDecided) {
		t.Errorf("approving twice: %v, want ErrDecided", err)
	}
	if _, err := e.rv().Reject(ctx, id, "admin", "changed my mind"); !errors.Is(err, podium.ErrDecided) {
		t.Errorf("rejecting an approved item: %v, want ErrDecided", err)
	}
	if _, err := e.rv().Reject(ctx, lowID, "admin", ""); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Errorf("a rejection without a reason: %v, want invalid_argument", err)
	}
	it, err = e.rv().Reject(ctx, lowID, "key_1", "impossible")
	if err != nil || it.Status != podium.ReviewRejected || it.Note != "impossible" {
		t.Fatalf("reject: %+v %v", it, err)
	}
	eq(t, e.top("b", ""), []string{"1:bob:[500]", "2:alice:[100]"})
	e.checkIndexes()

	e.restart()
	eq(t, e.top("b", ""), []string{"1:bob:[500]", "2:alice:[100]"})
	e.held(e.submit("b", "carol", 1), podium.HoldAll) // the setting was stored
	if it, err := e.rv().ReviewItem(ctx, lowID); err != nil || it.Status != podium.ReviewRejected || it.DecidedBy != "key_1" {
		t.Errorf("after a restart: %+v %v", it, err)
	}
	h, _, err := e.rv().History(ctx, "b", "bob", 0, 10)
	if err != nil || len(h) != 1 || h[0].ReviewID != id || h[0].Seq != 2 {
		t.Errorf("bob's history = %+v, %v; want seq 2 written by %s", h, err, id)
	}
	if _, err := e.rv().Reject(ctx, "rv_0000000000000000", "admin", "x"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Errorf("deciding a missing item: %v, want not_found", err)
	}
}

// hold top N: a score whose entry would rank in the first N is held,
// counted by CompareRank against the other players (the player's own entry
// is the one it replaces); a score that does not change a best entry is
// not held.
func TestReviewHoldTop(t *testing.T) {
	e := newEnv(t)
	e.board("t", podium.Best, podium.Never, desc("points"))
	for i, p := range []string{"a", "b", "c", "d"} {
		e.applied(e.submit("t", p, int64(100-10*i))) // a 100, b 90, c 80, d 70
	}
	e.review("t", &podium.Review{Hold: podium.HoldTop, Top: 2})
	e.held(e.submit("t", "x", 95), podium.HoldTop)  // would be 2nd
	e.applied(e.submit("t", "x", 90))               // ties b's 90 but later: 3rd
	e.applied(e.submit("t", "d", 85))               // 3rd of the others
	e.held(e.submit("t", "c", 91), podium.HoldTop)  // c would pass b
	e.applied(e.submit("t", "b", 50))               // no change to b's best
	e.held(e.submit("t", "b", 101), podium.HoldTop) // already 2nd, would be 1st: still in the top 2
	e.applied(e.submit("t", "y", 1))
	eq(t, e.top("t", ""), []string{"1:a:[100]", "2:b:[90]", "3:x:[90]", "4:d:[85]", "5:c:[80]", "6:y:[1]"})

	// An empty period: any entry is in the top N.
	e.board("t2", podium.Latest, podium.Never, asc("ms"))
	e.review("t2", &podium.Review{Hold: podium.HoldTop, Top: 1})
	e.held(e.submit("t2", "a", 5000), podium.HoldTop)
}

// hold threshold: held when the entry it makes is strictly better than
// the tuple in the board's order.
func TestReviewHoldThreshold(t *testing.T) {
	e := newEnv(t)
	e.board("s", podium.Best, podium.Never, asc("ms"), desc("bbbv"))
	e.review("s", &podium.Review{Hold: podium.HoldThreshold, Threshold: []int64{30000, 100}})
	e.applied(e.submit("s", "a", 30000, 100)) // equal: not past it
	e.applied(e.submit("s", "b", 30000, 99))
	e.held(e.submit("s", "c", 30000, 101), podium.HoldThreshold)
	e.held(e.submit("s", "d", 29999, 1), podium.HoldThreshold)
	e.applied(e.submit("s", "e", 30001, 500))
	eq(t, e.top("s", ""), []string{"1:a:[30000 100]", "2:b:[30000 99]", "3:e:[30001 500]"})
	// The setting is checked against the board's keys.
	_, _, err := e.eng.UpdateBoard(context.Background(), &podium.BoardUpdate{ID: "s", Review: &podium.Review{Hold: podium.HoldThreshold, Threshold: []int64{1}}})
	if podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Errorf("a threshold of 1 value on 2 keys: %v, want invalid_argument", err)
	}
	e.review("s", nil)
	e.applied(e.submit("s", "c", 1, 1))
}

// A frozen player's submissions are all held, on any board, until
// unfrozen; the freeze survives a restart.
func TestReviewFreeze(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("f", podium.Sum, podium.Never, desc("points"))
	e.applied(e.submit("f", "mallory", 1))
	if _, err := e.rv().Freeze(ctx, "mallory", "admin", "botting"); err != nil {
		t.Fatal(err)
	}
	e.held(e.submit("f", "mallory", 5), podium.ReasonFrozen)
	e.applied(e.submit("f", "alice", 5))
	e.restart()
	if f := e.rv().Frozen("mallory"); f == nil || f.Reason != "botting" {
		t.Fatalf("freeze after a restart = %+v", f)
	}
	e.clock.Set(e.clock.Now().Add(time.Second)) // the queue is in submission order
	id := e.held(e.submit("f", "mallory", 7), podium.ReasonFrozen)
	if err := e.rv().Unfreeze(ctx, "mallory"); err != nil {
		t.Fatal(err)
	}
	if err := e.rv().Unfreeze(ctx, "mallory"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Errorf("unfreezing twice: %v, want not_found", err)
	}
	e.applied(e.submit("f", "mallory", 10))
	// A held score of a sum board adds to the entry as it is at approval.
	if _, _, err := e.rv().Approve(ctx, id, "admin", ""); err != nil {
		t.Fatal(err)
	}
	eq(t, e.top("f", ""), []string{"1:mallory:[18]", "2:alice:[5]"})
	items, err := e.rv().ReviewItems(ctx, podium.ReviewFilter{Player: "mallory", Limit: 10})
	if err != nil || len(items) != 2 || items[0].Status != podium.ReviewPending || items[1].Status != podium.ReviewApproved {
		t.Errorf("mallory's items = %+v, %v; want the first pending and the second approved", items, err)
	}
}

// An item held in a period that has ended can only be rejected.
func TestReviewPeriodEnded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("d", podium.Best, podium.Daily, desc("points"))
	e.review("d", &podium.Review{Hold: podium.HoldAll})
	id := e.held(e.submit("d", "a", 5), podium.HoldAll)
	e.clock.Set(e.clock.Now().Add(24 * time.Hour))
	if _, _, err := e.rv().Approve(ctx, id, "admin", ""); podium.ErrorCode(err) != podium.ECodeConflict || errors.Is(err, podium.ErrDecided) {
		t.Errorf("approving an item of an ended period: %v, want a conflict", err)
	}
	if it, err := e.rv().ReviewItem(ctx, id); err != nil || it.Status != podium.ReviewPending {
		t.Errorf("item after a refused approval = %+v, %v; want pending", it, err)
	}
	if _, err := e.rv().Reject(ctx, id, "admin", "too late"); err != nil {
		t.Error(err)
	}
}

// A board's quota counts logged submissions: held ones are checked when
// they come but count only when approved, and an approval past the quota
// is refused with the item left pending.
func TestReviewQuota(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("q", podium.Best, podium.Daily, desc("points"))
	if _, _, err := e.eng.UpdateBoard(ctx, &podium.BoardUpdate{ID: "q", Quota: &podium.Quota{Max: 1},
		Review: &podium.Review{Hold: podium.HoldAll}}); err != nil {
		t.Fatal(err)
	}
	first := e.held(e.submit("q", "a", 5), podium.HoldAll)
	e.clock.Set(e.clock.Now().Add(time.Second))
	second := e.held(e.submit("q", "a", 6), podium.HoldAll)
	if _, _, err := e.rv().Approve(ctx, first, "admin", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.rv().Approve(ctx, second, "admin", ""); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Fatalf("approving past the quota: %v, want quota_exceeded", err)
	}
	if it, err := e.rv().ReviewItem(ctx, second); err != nil || it.Status != podium.ReviewPending {
		t.Errorf("item refused by the quota = %+v, %v; want pending", it, err)
	}
	// Over the quota now: a new score is refused, not held.
	if _, err := e.eng.Submit(ctx, []engine.Score{{Board: "q", Player: "a", Keys: []int64{7}}}, true, nil); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
		t.Errorf("a score past the quota: %v, want quota_exceeded", err)
	}
	eq(t, e.top("q", ""), []string{"1:a:[5]"})
}

// A player's history spans the board's periods, newest first, and pages
// by seq.
func TestReviewHistoryPeriods(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("h", podium.Best, podium.Daily, desc("points"))
	for day := range 3 {
		e.applied(e.submit("h", "a", int64(day+1)))
		e.applied(e.submit("h", "b", 9))
		e.clock.Set(e.clock.Now().Add(24 * time.Hour))
	}
	e.restart() // older periods are known, not loaded
	h, _, err := e.rv().History(ctx, "h", "a", 0, 10)
	var got []string
	for _, r := range h {
		got = append(got, fmt.Sprintf("%d:%s:%v", r.Seq, r.Period, r.Keys))
	}
	if err != nil || fmt.Sprint(got) != "[5:2026-12-02:[3] 3:2026-12-01:[2] 1:2026-11-30:[1]]" {
		t.Fatalf("history = %v, %v", got, err)
	}
	if h, _, err := e.rv().History(ctx, "h", "a", 3, 1); err != nil || len(h) != 1 || h[0].Seq != 1 {
		t.Errorf("History(before 3, limit 1) = %+v, %v; want seq 1", h, err)
	}
}
