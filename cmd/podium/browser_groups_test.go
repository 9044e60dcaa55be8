package main

import (
	"testing"
	"time"
)

// TestBrowserGroupBoardLive: a group board is a board, so its live page
// renders it and follows it live: a join moves a group past another on
// the open page, with no reload.
func TestBrowserGroupBoardLive(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	api.do("PUT", "/v1/boards/g.clans", `{"keys":[{"name":"members","order":"desc"}],"public":true,"group_set":{}}`)
	api.do("PUT", "/v1/boards/g.pts", `{"keys":[{"name":"points","order":"desc"}],"public":true}`)
	api.do("PUT", "/v1/boards/g.sum", `{"title":"Clans","keys":[{"name":"points","order":"desc"}],"public":true,
		"group_board":{"set":"g.clans","source":"g.pts","rule":"sum"}}`)
	api.do("PUT", "/v1/groups/g.clans/red/members/alice", "")
	api.do("PUT", "/v1/groups/g.clans/blue/members/bob", "")
	api.submit("g.pts", "alice", 10)
	api.submit("g.pts", "bob", 20)
	api.submit("g.pts", "carol", 15)

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	wd.open(base + "/boards/g.sum")
	waitLive(t, wd, 10*time.Second)
	waitRows(t, wd, 5*time.Second, "blue:1,red:2")
	// carol (15) joins red: red 25 passes blue 20 at once.
	api.do("PUT", "/v1/groups/g.clans/red/members/carol", "")
	waitRows(t, wd, 3*time.Second, "red:1,blue:2")
	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
