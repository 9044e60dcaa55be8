package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMENginx: the README's nginx snippet is deploy/nginx.conf's http
// block, from the map on, line for line (comments, blank lines and
// indentation aside), except the upstream servers' addresses: the README
// names the nodes of "Several nodes" (127.0.0.1:8081...), the file those of
// deploy/compose.yaml. So the two unbuffer the same locations (boards',
// contests' and the feed's streams, the WebSocket) with the same settings.
func TestREADMENginx(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile("../../deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "```nginx\n")
	if !ok {
		t.Fatal("README has no nginx block")
	}
	snippet, _, _ := strings.Cut(after, "```")
	got := nginxLines(snippet)
	file := nginxLines(string(conf))
	start := slices.Index(file, "map $http_upgrade $connection_upgrade {")
	if start < 0 || file[len(file)-1] != "}" {
		t.Fatalf("deploy/nginx.conf has no map of $http_upgrade or does not end with the http block's }:\n%s", strings.Join(file, "\n"))
	}
	want := file[start : len(file)-1] // to the end of the http block, without its }
	if !slices.Equal(got, want) {
		t.Fatalf("README's nginx snippet is not deploy/nginx.conf's http block:\nREADME:\n%s\n\ndeploy/nginx.conf:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, loc := range []string{"boards/[^/]+/stream", "contests/[^/]+/stream", "feed/stream", "|stream)$"} {
		if !strings.Contains(snippet, loc) {
			t.Errorf("the streams' location leaves out %s", loc)
		}
	}
}

var upstreamServer = regexp.MustCompile(`^server [^ ]+:[0-9]+ `)

// nginxLines is an nginx configuration's lines without comments, blank
// lines and indentation, with upstream servers' addresses as ADDR.
func nginxLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, upstreamServer.ReplaceAllString(l, "server ADDR "))
	}
	return out
}
