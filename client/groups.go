package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// GroupSet is a board's group set part: the caps (0: the server's
// defaults).
type GroupSet struct {
	MaxMembers   int `json:"max_members,omitempty"`
	MaxPerPlayer int `json:"max_per_player,omitempty"`
	MaxGroups    int `json:"max_groups,omitempty"`
}

// GroupBoard is a board's group board part: it ranks the groups of Set by
// their members' entries on Source, by Rule (sum, avg or best) of the
// best K members (0: all).
type GroupBoard struct {
	Set    string `json:"set"`
	Source string `json:"source"`
	Rule   string `json:"rule"`
	K      int    `json:"k,omitempty"`
}

// Membership is the answer of JoinGroup and LeaveGroup.
type Membership struct {
	Set     string `json:"set"`
	Group   string `json:"group"`
	Player  string `json:"player"`
	Joined  bool   `json:"joined,omitempty"`
	Left    bool   `json:"left,omitempty"`
	Already bool   `json:"already,omitempty"`
	N       int    `json:"n"`       // the change's number in the set
	Members int    `json:"members"` // the group's members after it
}

// GroupMembers is a page of a group's members.
type GroupMembers struct {
	Set     string `json:"set"`
	Group   string `json:"group"`
	Total   int    `json:"total"`
	Members []struct {
		Player   string    `json:"player"`
		N        int       `json:"n"`
		JoinedAt time.Time `json:"joined_at"`
	} `json:"members"`
}

// Groups is the group part of the API (docs/API.md, Groups and group
// boards), from Client.Groups.
type Groups struct{ c *Client }

// Groups returns the group methods.
func (c *Client) Groups() Groups { return Groups{c} }

// Join makes player a member of group in set (submit scope on the
// set); joining twice is not an error (Already). A cap is 409 conflict.
func (g Groups) Join(ctx context.Context, set, group, player string) (*Membership, error) {
	var out Membership
	_, err := g.c.call(ctx, request{method: http.MethodPut, path: path("groups", set, group, "members", player), kind: idempotent}, &out)
	return &out, err
}

// Leave takes player out of group (404 when not a member).
func (g Groups) Leave(ctx context.Context, set, group, player string) (*Membership, error) {
	var out Membership
	_, err := g.c.call(ctx, request{method: http.MethodDelete, path: path("groups", set, group, "members", player), kind: idempotent}, &out)
	return &out, err
}

// Members reads a page of a group's members (limit 1-1000).
func (g Groups) Members(ctx context.Context, set, group string, offset, limit int) (*GroupMembers, error) {
	var out GroupMembers
	_, err := g.c.call(ctx, request{method: http.MethodGet, path: path("groups", set, group, "members"), query: pageQuery(offset, limit)}, &out)
	return &out, err
}

// OfPlayer lists the groups player is in within set.
func (g Groups) OfPlayer(ctx context.Context, player, set string) ([]string, error) {
	var out struct {
		Groups []string `json:"groups"`
	}
	q := url.Values{}
	q.Set("set", set)
	_, err := g.c.call(ctx, request{method: http.MethodGet, path: path("players", player, "groups"), query: q}, &out)
	return out.Groups, err
}

// Entries reads the entries of one group's members on board, with
// their ranks on the whole board (the members view).
func (g Groups) Entries(ctx context.Context, board, set, group string, opts ReadOptions) (*Page, error) {
	q := opts.query()
	q.Set("group", set+"/"+group)
	var out Page
	_, err := g.c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries"), query: q}, &out)
	return &out, err
}
