package client_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/podiumhq/podium/client"
)

// TestPlayersAtTheDoor drives bounds, quotas, moderation, history,
// evidence and export through the client against a real server.
func TestPlayersAtTheDoor(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	if _, _, err := admin.PutBoard(ctx, "daily", client.BoardSpec{
		Keys:   []client.RankKey{{Name: "time_ms", Order: "asc", Min: client.Int64(1000)}},
		Public: client.Bool(true), PlayerSubmit: client.Bool(true),
		Quota: &client.Quota{Max: 3}, Review: &client.ReviewPolicy{Hold: "threshold", Threshold: []int64{30000}},
	}); err != nil {
		t.Fatal(err)
	}
	b := must(admin.GetBoard(ctx, "daily"))
	if b.Quota == nil || b.Quota.Max != 3 || b.Review == nil || b.Review.Hold != "threshold" || b.Keys[0].Min == nil || *b.Keys[0].Min != 1000 {
		t.Fatalf("board: %+v", b)
	}
	s := must(admin.IssueSession(ctx, "alice", client.SessionSpec{Device: "phone"}))
	alice := admin.WithKey(s.Token)

	if _, err := alice.Submit(ctx, "daily", client.Score{Player: "alice", Keys: []int64{999}}); !errors.Is(err, client.ErrUnprocessable) || !strings.Contains(err.Error(), ">= 1000") {
		t.Fatalf("a value under the key's min: %v", err)
	}
	first := must(alice.Submit(ctx, "daily", client.Score{Player: "alice", Keys: []int64{40000}}))
	if first.Status != "" || first.Entry.Rank != 1 {
		t.Fatalf("an unheld submission: %+v", first)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("{\"t\":0,\"click\":[3,4]}\n{\"t\":120,\"click\":[5,5]}\n"))
	zw.Close()
	ev := must(alice.UploadEvidence(ctx, "daily", "alice", first.Seq, gz.Bytes()))
	if ev.Events != 2 || ev.Seq != first.Seq || ev.Reused {
		t.Fatalf("UploadEvidence: %+v", ev)
	}
	if again := must(alice.UploadEvidence(ctx, "daily", "alice", first.Seq, gz.Bytes())); again.ContentSHA256 != ev.ContentSHA256 {
		t.Fatalf("the same upload again: %+v", again)
	}
	if got := must(admin.DownloadEvidence(ctx, "daily", "alice", first.Seq)); !bytes.Equal(got, gz.Bytes()) {
		t.Fatalf("DownloadEvidence: %d bytes, want the %d uploaded", len(got), gz.Len())
	}

	held := must(alice.Submit(ctx, "daily", client.Score{Player: "alice", Keys: []int64{20000}}))
	if held.Status != "pending" || held.ID == "" || held.HoldReason == "" {
		t.Fatalf("a held submission: %+v", held)
	}
	if !strings.Contains(held.EvidenceURL, held.ID) {
		t.Fatalf("a held answer's evidence_url: %q", held.EvidenceURL)
	}
	if ev := must(alice.UploadReviewEvidence(ctx, "daily", "alice", held.ID, gz.Bytes())); ev.Review != held.ID || !ev.Reused {
		t.Fatalf("UploadReviewEvidence: %+v", ev)
	}
	if e := must(admin.Entry(ctx, "daily", "alice", client.ReadOptions{})); e.Entry.Keys[0] != 40000 {
		t.Fatalf("the held score is ranked before approval: %+v", e)
	}
	q := must(admin.Review(ctx, client.ReviewQuery{Board: "daily"}))
	if len(q.Items) != 1 || q.Items[0].ID != held.ID || q.Items[0].Status != "pending" || len(q.Items[0].History) == 0 {
		t.Fatalf("Review: %+v", q)
	}
	if _, err := alice.Review(ctx, client.ReviewQuery{}); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("a player reading the queue: %v", err)
	}
	it := must(admin.Approve(ctx, held.ID, "replay checked"))
	if it.Status != "approved" || it.Decision == nil || it.Decision.Reason != "replay checked" || it.Result == nil || it.Result.Entry.Rank != 1 {
		t.Fatalf("Approve: %+v", it)
	}
	// The evidence followed the approval to the entry's submission.
	if got := must(admin.DownloadEvidence(ctx, "daily", "alice", it.Result.Seq)); !bytes.Equal(got, gz.Bytes()) {
		t.Fatalf("the held submission's evidence after approval: %d bytes", len(got))
	}
	if _, err := admin.Reject(ctx, held.ID, "too late"); !client.IsConflict(err) {
		t.Fatalf("deciding twice: %v", err)
	}
	if e := must(admin.Entry(ctx, "daily", "alice", client.ReadOptions{})); e.Entry.Keys[0] != 20000 {
		t.Fatalf("after approval: %+v", e)
	}
	h := must(alice.History(ctx, "daily", "alice", "", 1))
	if len(h.Items) != 1 || h.Items[0].Keys[0] != 20000 || h.NextCursor == nil {
		t.Fatalf("History page 1: %+v", h)
	}
	h2 := must(alice.History(ctx, "daily", "alice", *h.NextCursor, 10))
	if len(h2.Items) != 1 || h2.Items[0].Keys[0] != 40000 || h2.NextCursor != nil {
		t.Fatalf("History page 2: %+v", h2)
	}

	// Two accepted so far (the approval counts); the third is the last.
	must(alice.Submit(ctx, "daily", client.Score{Player: "alice", Keys: []int64{35000}}))
	if _, err := alice.Submit(ctx, "daily", client.Score{Player: "alice", Keys: []int64{36000}}); !errors.Is(err, client.ErrQuotaExceeded) {
		t.Fatalf("past the quota: %v", err)
	}

	if err := admin.FreezePlayer(ctx, "bob", "reported"); err != nil {
		t.Fatal(err)
	}
	if r := must(admin.Submit(ctx, "daily", client.Score{Player: "bob", Keys: []int64{50000}})); r.Status != "pending" {
		t.Fatalf("a frozen player's submission: %+v", r)
	}
	if err := admin.UnfreezePlayer(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if r := must(admin.Submit(ctx, "daily", client.Score{Player: "bob", Keys: []int64{50000}})); r.Status != "" || r.Entry.Rank != 2 {
		t.Fatalf("after the unfreeze: %+v", r)
	}

	var csv bytes.Buffer
	consistent, err := admin.ExportBoard(ctx, "daily", client.ExportOptions{}, &csv)
	if err != nil || !consistent {
		t.Fatalf("ExportBoard: consistent %v, %v", consistent, err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if len(lines) != 3 || lines[0] != "rank,player,name,time_ms,at,meta" || !strings.HasPrefix(lines[1], "1,alice,") || !strings.HasPrefix(lines[2], "2,bob,") {
		t.Fatalf("the CSV export:\n%s", csv.String())
	}
}
