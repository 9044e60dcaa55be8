package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/pgtest"
)

// TestClusterDatabaseDown cuts one node off the database (a proxy that
// drops every connection and refuses new ones): that node answers writes
// at once with 503 and Retry-After and nothing applied, keeps serving reads
// from memory, and /readyz says degraded and stale; the other node goes on
// writing. When the database is back the cut-off node catches up and takes
// writes again, and no acknowledged write is lost.
func TestClusterDatabaseDown(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	var proxy *pgtest.Proxy
	c := newClusterWith(t, 2, "", func(i int, dsn string) []string {
		if i != 0 {
			return nil
		}
		via, p := pgtest.Through(t, dsn)
		proxy = p
		return []string{"--db", via}
	})
	a, b := c.nodes[0].url, c.nodes[1].url
	if code, body, _ := do(b, "PUT", "/v1/boards/d", clusterKey, `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	total := 0
	submit := func(base string, want int) {
		t.Helper()
		code, body, hdr := do(base, "POST", "/v1/boards/d/scores", clusterKey, `{"player":"p","score":1}`)
		if code != want {
			t.Fatalf("submit to %s: %d %s, want %d", base, code, body, want)
		}
		if code == 200 {
			total++
		} else if hdr.Get("Retry-After") == "" || !strings.Contains(string(body), "nothing was applied") {
			t.Fatalf("a refused write must say nothing was applied and when to retry: %s %v", body, hdr)
		}
	}
	eventually(t, 5*time.Second, "board on node1", func() string {
		if code, _, _ := do(a, "GET", "/v1/boards/d", "", ""); code != 200 {
			return fmt.Sprint(code)
		}
		return ""
	})
	submit(a, 200)
	submit(b, 200)

	proxy.Down()
	// The first write may find out; from then on writes fail at once.
	eventually(t, 10*time.Second, "node1 refuses writes", func() string {
		if code, body, _ := do(a, "POST", "/v1/boards/d/scores", clusterKey, `{"player":"x","score":1}`); code != 503 {
			if code == 200 {
				total++ // it got through before the cut took hold
			}
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	// That it is refused at once, without trying the database again, is
	// engine.TestSharedWritesFailFastWhileDatabaseDown (counted, not timed).
	submit(a, 503)
	submit(b, 200)
	if code, body, _ := do(a, "GET", "/v1/boards/d/entries", "", ""); code != 200 || !strings.Contains(string(body), `"player":"p"`) {
		t.Fatalf("reads on the cut-off node: %d %s", code, body)
	}
	code, body, _ := do(a, "GET", "/readyz", "", "")
	if code != 200 || !strings.Contains(string(body), `"degraded"`) || !strings.Contains(string(body), `"stale":true`) {
		t.Fatalf("readyz of the cut-off node: %d %s", code, body)
	}

	proxy.Up()
	eventually(t, 10*time.Second, "node1 takes writes again", func() string {
		code, body, _ := do(a, "POST", "/v1/boards/d/scores", clusterKey, `{"player":"p","score":1}`)
		if code != 200 {
			return fmt.Sprintf("%d %s", code, body)
		}
		total++
		return ""
	})
	for _, u := range []string{a, b} {
		eventually(t, 10*time.Second, "every acknowledged write on "+u, func() string {
			_, body, _ := do(u, "GET", "/v1/boards/d/entries?limit=10", "", "")
			var page struct{ Entries []struct{ Keys []int64 } }
			json.Unmarshal(body, &page)
			sum := 0
			for _, e := range page.Entries {
				sum += int(e.Keys[0])
			}
			if sum != total {
				return fmt.Sprintf("sum %d, want %d", sum, total)
			}
			return ""
		})
	}
	eventually(t, 15*time.Second, "readyz after the database came back", func() string {
		if _, body, _ := do(a, "GET", "/readyz", "", ""); !strings.Contains(string(body), `"ready"`) {
			return string(body)
		}
		return ""
	})
}

// TestClusterStreams: a live stream on one node follows writes taken by
// another; a stream opened with a key that another node revokes ends; and
// a reconnect with Last-Event-ID on another node gets a snapshot at least
// as new as what the client had.
func TestClusterStreams(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	c := newCluster(t, 2, "")
	a, b := c.nodes[0].url, c.nodes[1].url
	if code, body, _ := do(a, "PUT", "/v1/boards/live", clusterKey, `{"keys":[{"name":"n","order":"desc"}],"public":false}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body, _ := do(a, "POST", "/v1/keys", clusterKey, `{"name":"viewer","scopes":["read"]}`)
	if code != 201 {
		t.Fatalf("key: %d %s", code, body)
	}
	var key struct{ ID, Key string }
	json.Unmarshal(body, &key)
	eventually(t, 5*time.Second, "board and key on node2", func() string {
		if code, body, _ := do(b, "GET", "/v1/boards/live", key.Key, ""); code != 200 {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := openStream(t, ctx, b+"/v1/boards/live/stream?limit=10", key.Key, "")
	first := nextEvent(t, events)
	if first.typ != "snapshot" {
		t.Fatalf("first event: %+v", first)
	}
	if code, body, _ := do(a, "POST", "/v1/boards/live/scores", clusterKey, `{"player":"w","score":9}`); code != 200 {
		t.Fatalf("submit: %d %s", code, body)
	}
	var last sseEvent
	for {
		ev := nextEvent(t, events)
		if ev.typ == "delta" || ev.typ == "snapshot" {
			if strings.Contains(ev.data, `"player":"w"`) {
				last = ev
				break
			}
		}
	}

	// Resume on the other node: a snapshot (the id names node2's chain),
	// never older than what the client saw.
	rctx, rcancel := context.WithCancel(context.Background())
	resumed := openStream(t, rctx, a+"/v1/boards/live/stream?limit=10", key.Key, last.id)
	ev := nextEvent(t, resumed)
	rcancel()
	var seqs struct{ Seq uint64 }
	json.Unmarshal([]byte(ev.data), &seqs)
	var had struct{ Seq uint64 }
	json.Unmarshal([]byte(last.data), &had)
	if ev.typ != "snapshot" || seqs.Seq < had.Seq || !strings.Contains(ev.data, `"player":"w"`) {
		t.Fatalf("resume on another node: %+v (had seq %d)", ev, had.Seq)
	}

	// Revoked on node1: the stream on node2 ends.
	if code, body, _ := do(a, "DELETE", "/v1/keys/"+key.ID, clusterKey, ""); code != 204 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return // the stream ended
			}
			if ev.typ == "error" && !strings.Contains(ev.data, "unauthenticated") {
				t.Fatalf("error event: %+v", ev)
			}
		case <-deadline:
			t.Fatal("a stream opened with a key revoked on another node is still open")
		}
	}
}

type sseEvent struct{ id, typ, data string }

// openStream opens an SSE stream and returns its events; the channel is
// closed when the stream ends.
func openStream(t *testing.T, ctx context.Context, url, key, lastID string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("stream %s: %d", url, res.StatusCode)
	}
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.typ != "" {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return out
}

func nextEvent(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return sseEvent{}
}
