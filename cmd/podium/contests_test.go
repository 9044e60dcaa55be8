package main

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// podium serve runs contests: a contest made through the API survives a
// restart, and revoking a key ends its contest streams at once.
func TestServeContests(t *testing.T) {
	dir := t.TempDir()
	m := testMain(t, dir)
	now := time.Now().UTC()
	body := `{"title":"Quals","start":"` + now.Add(-time.Hour).Format(time.RFC3339) + `","end":"` + now.Add(time.Hour).Format(time.RFC3339) + `"}`
	if code, r := call(t, m, "PUT", "/v1/contests/quals", body); code != 201 {
		t.Fatalf("PUT contest: %d %v", code, r)
	}
	if code, r := call(t, m, "PUT", "/v1/contests/quals/challenges/web", `{"scoring":{"value":100}}`); code != 201 {
		t.Fatalf("PUT challenge: %d %v", code, r)
	}
	if code, r := call(t, m, "POST", "/v1/contests/quals/attempts", `{"team":"alice","challenge":"web","correct":true}`); code != 200 {
		t.Fatalf("attempt: %d %v", code, r)
	}
	_, k := call(t, m, "POST", "/v1/keys", `{"name":"viewer","scopes":["read"]}`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", m.URL()+"/v1/contests/quals/stream", nil)
	req.Header.Set("Authorization", "Bearer "+k["key"].(string))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitLine := func(prefix string) string {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stream ended before %q", prefix)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q line", prefix)
			}
		}
	}
	waitLine("event: snapshot")
	if code, _ := call(t, m, "DELETE", "/v1/keys/"+k["id"].(string), ""); code != 204 {
		t.Fatalf("revoke: %d", code)
	}
	waitLine("event: error")
	if l := waitLine("data: "); !strings.Contains(l, "unauthenticated") {
		t.Fatalf("after the revocation: %s", l)
	}
	cancel()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = testMain(t, dir)
	defer m.Close()
	if code, r := call(t, m, "GET", "/v1/contests/quals/standings", ""); code != 200 || r["total"] != 1.0 {
		t.Fatalf("after a restart: %d %v", code, r)
	}
}
