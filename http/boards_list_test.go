package http_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/podiumhq/podium"
)

// listAll walks GET /v1/boards page by page (query adds to each request)
// and returns the ids in the order listed and the pages' sizes.
func (s *server) listAll(key, query string) (ids []string, sizes []int) {
	s.t.Helper()
	cursor := ""
	for {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		page := s.must(200, s.do("GET", "/v1/boards?"+strings.TrimPrefix(q, "&"), key, nil)).json(s.t)
		boards := page["boards"].([]any)
		for _, b := range boards {
			ids = append(ids, b.(map[string]any)["id"].(string))
		}
		sizes = append(sizes, len(boards))
		next, ok := page["next_cursor"]
		if !ok {
			s.t.Fatalf("a page without next_cursor: %v", page)
		}
		if next == nil {
			return ids, sizes
		}
		cursor = next.(string)
		if len(sizes) > 10_000 {
			s.t.Fatal("the list does not end")
		}
	}
}

// putBoards makes n boards b00000... on the engine directly (every third
// private), meta given, and returns the public ones' ids and all ids.
func (s *server) putBoards(n int, meta string) (public, all []string) {
	s.t.Helper()
	for i := range n {
		id := fmt.Sprintf("b%05d", i)
		b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Public: i%3 != 0}
		if meta != "" {
			b.Meta = []byte(meta)
		}
		if _, _, err := s.eng.PutBoard(context.Background(), b); err != nil {
			s.t.Fatal(err)
		}
		all = append(all, id)
		if b.Public {
			public = append(public, id)
		}
	}
	return public, all
}

// TestBoardListPages: GET /v1/boards answers a page at a time. Without a
// cursor (an old client) it is the first page, of at most 1000 boards,
// with next_cursor; following next_cursor lists every board the caller may
// read once, in id order; anonymous callers see only the public ones.
func TestBoardListPages(t *testing.T) {
	s := newServer(t)
	public, all := s.putBoards(1203, "")

	first := s.must(200, s.do("GET", "/v1/boards", adminKey, nil)).json(t)
	if n := len(first["boards"].([]any)); n != 1000 || first["next_cursor"] == nil {
		t.Fatalf("first page: %d boards, next_cursor %v", n, first["next_cursor"])
	}
	if ids, sizes := s.listAll(adminKey, ""); !slices.Equal(ids, all) || !slices.Equal(sizes, []int{1000, 203}) {
		t.Fatalf("admin: pages %v, %d ids", sizes, len(ids))
	}
	if ids, sizes := s.listAll("", "limit=100"); !slices.Equal(ids, public) || len(sizes) != 9 {
		t.Fatalf("anonymous, limit 100: pages %v, %d ids (want %d)", sizes, len(ids), len(public))
	}
	// A key limited to a prefix sees the public boards and its own.
	k := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"r","scopes":["read"],"boards":["b0000"]}`)).json(t)["key"].(string)
	var want []string
	for _, id := range all {
		if strings.HasPrefix(id, "b0000") || slices.Contains(public, id) {
			want = append(want, id)
		}
	}
	if ids, _ := s.listAll(k, "limit=333"); !slices.Equal(ids, want) {
		t.Fatalf("a key limited to b0000: %d ids, want %d", len(ids), len(want))
	}

	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "cursor=%21%21", "cursor=" + "QQ", "cursor=&cursor="} {
		if c := s.must(400, s.do("GET", "/v1/boards?"+q, adminKey, nil)).errCode(t); c != "invalid_argument" {
			t.Fatalf("%s: %s", q, c)
		}
	}
}

// TestBoardListPageBytes: a page stops at about 1 MiB of JSON, whatever
// the limit, and the next one goes on from there.
func TestBoardListPageBytes(t *testing.T) {
	s := newServer(t)
	meta := `{"x":"` + strings.Repeat("m", 4000) + `"}`
	_, all := s.putBoards(400, meta)
	r := s.must(200, s.do("GET", "/v1/boards", adminKey, nil))
	if len(r.body) > 1<<20+8<<10 {
		t.Fatalf("a page of %d bytes", len(r.body))
	}
	ids, sizes := s.listAll(adminKey, "")
	if !slices.Equal(ids, all) || len(sizes) != 2 {
		t.Fatalf("pages %v, %d ids", sizes, len(ids))
	}
}
