package http_test

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/podiumhq/podium/stream"
)

// TestRouteLookupAnswers: the answers the mux gives by itself keep their
// form with one route lookup a request (routes.go): a path that cleans to
// a route is redirected there, one that cleans to no route is a JSON 404,
// a method a route lacks a JSON 405 with Allow.
func TestRouteLookupAnswers(t *testing.T) {
	s := newServerOpts(t, stream.Config{}, false, nil)
	c := dialRaw(t, s)
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		req, status, has string
	}{
		{"GET /v1//boards HTTP/1.1\r\nHost: podium\r\n\r\n", "307", "Location: /v1/boards\r\n"},
		{"GET /v1//nothing HTTP/1.1\r\nHost: podium\r\n\r\n", "404", `"code":"not_found"`},
		{"PATCH /v1/boards HTTP/1.1\r\nHost: podium\r\nContent-Length: 0\r\n\r\n", "405", "Allow: GET, HEAD\r\n"},
		{"GET /v1/boards HTTP/1.1\r\nHost: podium\r\n\r\n", "200", `"boards":`},
	} {
		io.WriteString(c, tc.req)
		res, body := readAnswer(t, br)
		var sb strings.Builder
		res.Header.Write(&sb)
		all := sb.String() + body
		if got := res.Status[:3]; got != tc.status || !strings.Contains(all, tc.has) {
			t.Fatalf("%q: %s\n%s, want %s with %q", tc.req, res.Status, all, tc.status, tc.has)
		}
	}
}
