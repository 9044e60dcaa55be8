package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// scripted serves each stream connection the next script of frames, then
// holds the connection open (the last script) or ends it.
func scripted(t *testing.T, scripts ...string) (string, func() []string) {
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(lastIDs)
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		if n >= len(scripts) {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(scripts[n]))
		w.(http.Flusher).Flush()
		if n == len(scripts)-1 {
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lastIDs...)
	}
}

func ev(typ, data string) string { return "event: " + typ + "\r\ndata: " + data + "\r\n\r\n" }

const snap1 = `{"type":"snapshot","board":"b","title":"B","keys":[{"name":"n","order":"desc"}],"period":"2026-11-30","next_reset":"2026-12-01T00:00:00.000Z",` +
	`"seq":3,"snapshot_id":7,"limit":3,"total":3,"entries":[` +
	`{"rank":1,"player":"a","name":"a","keys":[30],"at":"2026-11-30T10:00:00.000Z","meta":{}},` +
	`{"rank":2,"player":"b","name":"b","keys":[20],"at":"2026-11-30T10:00:00.000Z","meta":{}},` +
	`{"rank":3,"player":"c","name":"c","keys":[10],"at":"2026-11-30T10:00:00.000Z","meta":{}}]}`

// A delta that names only the newcomer: the ranks it leaves free are
// filled by the others in their old order, renumbered (the rule that
// keeps a client right whatever a delta omits).
func TestWatchFillsFreeRanks(t *testing.T) {
	url, _ := scripted(t, ": hello\n\n"+ev("snapshot", snap1)+
		ev("delta", `{"type":"delta","board":"b","period":"2026-11-30","seq":4,"prev_seq":3,"snapshot_id":7,"total":4,`+
			`"changes":[{"rank":1,"player":"d","name":"D","keys":[40],"at":"2026-11-30T11:00:00.000Z","meta":{}}],"removed":[{"player":"c","prev_rank":3}]}`))
	got := collect(t, url, 2)
	if s := ranking(got[1].state.Entries); s != "1:d:[40] 2:a:[30] 3:b:[20] " || got[1].state.Total != 4 || got[1].state.Seq != 4 {
		t.Fatalf("after the delta: %s total %d seq %d", s, got[1].state.Total, got[1].state.Seq)
	}
	u := got[1].update
	if u.Type != "delta" || len(u.Changed) != 1 || u.Changed[0].PrevRank != nil || len(u.Left) != 1 || u.Left[0].Player != "c" {
		t.Fatalf("update: %+v", u)
	}
	if got[0].state.NextReset == nil || got[0].state.Keys[0].Name != "n" || got[0].state.EventID() != "7.3" {
		t.Fatalf("snapshot state: %+v", got[0].state)
	}
}

// A period event: deltas wait for the snapshot of the new period, which
// reports the period that ended.
func TestWatchPeriodRollover(t *testing.T) {
	snap2 := strings.NewReplacer(`"period":"2026-11-30"`, `"period":"2026-12-01"`, `"seq":3,"snapshot_id":7`, `"seq":9,"snapshot_id":8`).Replace(snap1)
	url, _ := scripted(t, ev("snapshot", snap1)+
		"id: 7.3.period\nevent: period\ndata: "+`{"type":"period","board":"b","period":"2026-12-01","previous":"2026-11-30","next_reset":"2026-12-02T00:00:00.000Z"}`+"\n\n"+
		ev("delta", `{"type":"delta","board":"b","period":"2026-12-01","seq":4,"prev_seq":3,"snapshot_id":7,"changes":[],"removed":[{"player":"a","prev_rank":1}]}`)+
		ev("snapshot", snap2))
	got := collect(t, url, 2)
	if got[1].update.Type != "snapshot" || got[1].update.PreviousPeriod != "2026-11-30" || got[1].state.Period != "2026-12-01" ||
		len(got[1].update.Changed) != 0 || len(got[1].state.Entries) != 3 {
		t.Fatalf("after the rollover: %+v %+v", got[1].update, got[1].state)
	}
}

// An error event with a code worth retrying drops the connection and the
// watch resumes; a fatal one ends it.
func TestWatchErrorEvents(t *testing.T) {
	url, ids := scripted(t, ev("snapshot", snap1)+ev("error", `{"type":"error","board":"b","code":"unavailable","message":"shutting down"}`),
		ev("error", `{"type":"error","board":"b","code":"forbidden","message":"the board is private now"}`))
	var n int
	err := client.New(url).Watch(ctxT(t), "b", client.WatchOptions{Limit: 3, MinDelay: time.Millisecond}, func(client.State, client.Update) { n++ })
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "forbidden" || n != 1 {
		t.Fatalf("Watch: %v after %d updates", err, n)
	}
	if got := ids(); len(got) != 2 || got[1] != "7.3" {
		t.Fatalf("Last-Event-IDs %q", got)
	}
}

func collect(t *testing.T, url string, n int) []seen {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []seen
	err := client.New(url).Watch(ctx, "b", client.WatchOptions{Limit: 3}, func(s client.State, u client.Update) {
		got = append(got, seen{s, u})
		if len(got) == n {
			cancel()
		}
	})
	if err != nil {
		t.Fatalf("Watch: %v after %d updates", err, len(got))
	}
	return got
}
