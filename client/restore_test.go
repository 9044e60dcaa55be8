package client_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// Restore sets entries exactly with their original at; a repeat is
// unchanged; a bad item is refused alone; a key without admin is 403.
func TestRestore(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	if _, _, err := admin.PutBoard(ctx, "s", client.BoardSpec{Keys: []client.RankKey{{Name: "pts", Order: "desc"}}, Mode: "sum", Public: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	items := []client.RestoreEntry{
		{Period: "all", Player: "amy", Keys: []int64{40}, At: at, Meta: json.RawMessage(`{"r":1}`)},
		{Period: "all", Player: "bo", Keys: []int64{1, 2}, At: at},
	}
	res, err := admin.Restore(ctx, "s", items)
	if err != nil || res.Restored != 1 || res.Refused != 1 || res.Results[0].Status != "restored" || res.Results[0].Seq == 0 ||
		res.Results[1].Error == nil || res.Results[1].Error.Code != "invalid_argument" {
		t.Fatalf("Restore: %+v %v", res, err)
	}
	e := must(admin.Entry(ctx, "s", "amy", client.ReadOptions{}))
	if !e.Entry.At.Equal(at) || e.Entry.Keys[0] != 40 || string(e.Entry.Meta) != `{"r":1}` {
		t.Fatalf("restored entry: %+v", e.Entry)
	}
	if res, err := admin.Restore(ctx, "s", items[:1]); err != nil || res.Unchanged != 1 || res.Results[0].Status != "unchanged" {
		t.Fatalf("Restore again: %+v %v", res, err)
	}
	key := must(admin.CreateKey(ctx, client.APIKeySpec{Name: "gs", Scopes: []string{"submit"}}))
	if _, err := admin.WithKey(key.Key).Restore(ctx, "s", items[:1]); client.StatusOf(err) != 403 {
		t.Fatalf("Restore with a submit key: %v", err)
	}
}
