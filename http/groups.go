package http

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/groups"
)

// Groups and group boards (issue 21, part 2): memberships of a group set
// (a board, podium.GroupSet) and the members view of any board. A group
// board is a board: its entries, stream and page need nothing here.

// groupModule is what the group routes call: the groups module.
type groupModule interface {
	Join(ctx context.Context, set, grp, player string) (groups.ChangeResult, error)
	Leave(ctx context.Context, set, grp, player string) (groups.ChangeResult, error)
	Members(ctx context.Context, set, grp string, offset, limit int) ([]groups.Member, int, error)
	GroupsOf(ctx context.Context, set, player string) ([]string, error)
	MemberList(ctx context.Context, set, grp string) ([]string, error)
}

var _ groupModule = (*groups.Module)(nil)

// groupHandlers serves the group routes.
type groupHandlers struct {
	*base
	mod groupModule
}

// noGroups serves a server whose engine has no groups module: 503.
type noGroups struct{}

var errNoGroups = podium.Errorf(podium.ECodeUnavailable, "this server keeps no groups")

func (noGroups) Join(context.Context, string, string, string) (groups.ChangeResult, error) {
	return groups.ChangeResult{}, errNoGroups
}
func (noGroups) Leave(context.Context, string, string, string) (groups.ChangeResult, error) {
	return groups.ChangeResult{}, errNoGroups
}
func (noGroups) Members(context.Context, string, string, int, int) ([]groups.Member, int, error) {
	return nil, 0, errNoGroups
}
func (noGroups) GroupsOf(context.Context, string, string) ([]string, error) { return nil, errNoGroups }
func (noGroups) MemberList(context.Context, string, string) ([]string, error) {
	return nil, errNoGroups
}

func (s *Server) groupRoutes() {
	s.mux.HandleFunc("PUT /v1/groups/{set}/{group}/members/{player}", s.api(s.groups.join))
	s.mux.HandleFunc("DELETE /v1/groups/{set}/{group}/members/{player}", s.api(s.groups.leave))
	s.mux.HandleFunc("GET /v1/groups/{set}/{group}/members", s.api(s.groups.members, "offset", "limit"))
	s.mux.HandleFunc("GET /v1/players/{player}/groups", s.api(s.groups.playerGroups, "set"))
}

// change is a join or a leave: scope submit on the set board (a game
// server's key, or an admin's), no body.
func (s *groupHandlers) change(w http.ResponseWriter, r *http.Request, join bool) error {
	set := r.PathValue("set")
	if _, err := s.require(r, podium.ScopeSubmit, set); err != nil {
		return err
	}
	if r.ContentLength > 0 {
		return podium.Errorf(podium.ECodeInvalid, "this request takes no body")
	}
	grp, player := r.PathValue("group"), r.PathValue("player")
	var res groups.ChangeResult
	var err error
	if join {
		res, err = s.mod.Join(r.Context(), set, grp, player)
	} else {
		res, err = s.mod.Leave(r.Context(), set, grp, player)
	}
	if err != nil {
		return err
	}
	b := []byte(`{"set":`)
	b = appendString(b, res.Set)
	b = append(b, `,"group":`...)
	b = appendString(b, res.Group)
	b = append(b, `,"player":`...)
	b = appendString(b, res.Player)
	if join {
		b = append(b, `,"joined":true,"already":`...)
		b = strconv.AppendBool(b, res.Already)
	} else {
		b = append(b, `,"left":true`...)
	}
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, res.N, 10)
	b = append(b, `,"members":`...)
	b = strconv.AppendInt(b, int64(res.Members), 10)
	b = append(b, '}')
	status := http.StatusOK
	if join && !res.Already {
		status = http.StatusCreated
	}
	writeJSON(w, status, b)
	return nil
}

// PUT /v1/groups/{set}/{group}/members/{player}: join.
func (s *groupHandlers) join(w http.ResponseWriter, r *http.Request) error {
	return s.change(w, r, true)
}

// DELETE /v1/groups/{set}/{group}/members/{player}: leave.
func (s *groupHandlers) leave(w http.ResponseWriter, r *http.Request) error {
	return s.change(w, r, false)
}

// GET /v1/groups/{set}/{group}/members?offset=&limit=: the members in
// the order they joined; read access to the set.
func (s *groupHandlers) members(w http.ResponseWriter, r *http.Request) error {
	bi, _, err := s.readableBoard(r, r.PathValue("set"))
	if err != nil {
		return err
	}
	offset, limit, err := queryPage(r)
	if err != nil {
		return err
	}
	grp := r.PathValue("group")
	list, total, err := s.mod.Members(r.Context(), bi.ID, grp, offset, limit)
	if err != nil {
		return err
	}
	b := []byte(`{"set":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"group":`...)
	b = appendString(b, grp)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"members":[`...)
	for i, m := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"player":`...)
		b = appendString(b, m.Player)
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, m.N, 10)
		b = append(b, `,"joined_at":`...)
		b = appendTime(b, m.JoinedAt)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/players/{player}/groups?set=: the groups of the set a player
// is in (at most the set's max_per_player); read access to the set.
func (s *groupHandlers) playerGroups(w http.ResponseWriter, r *http.Request) error {
	set, ok := queryValue(r, "set")
	if !ok || set == "" {
		return podium.Errorf(podium.ECodeInvalid, "set is required: the group set's board id")
	}
	bi, _, err := s.readableBoard(r, set)
	if err != nil {
		return err
	}
	player := r.PathValue("player")
	list, err := s.mod.GroupsOf(r.Context(), bi.ID, player)
	if err != nil {
		return err
	}
	b := []byte(`{"set":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"player":`...)
	b = appendString(b, player)
	b = append(b, `,"groups":[`...)
	for i, g := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, g)
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// groupMembers resolves group=<set>/<group> of the entries route to the
// group's members, with read access to the set checked.
func (s *entryHandlers) groupMembers(r *http.Request, ref string) ([]string, error) {
	set, grp, ok := strings.Cut(ref, "/")
	if !ok || set == "" || grp == "" {
		return nil, podium.Errorf(podium.ECodeInvalid, "group must be <set>/<group>: the group set's board id and the group id")
	}
	if err := podium.ValidGroupID(grp); err != nil {
		return nil, err
	}
	bi, _, err := s.readableBoard(r, set)
	if err != nil {
		return nil, err
	}
	return s.groups.MemberList(r.Context(), bi.ID, grp)
}

// appendGroupSettings appends a group set's or group board's settings to
// a board's JSON, and closes it.
func appendGroupSettings(b []byte, def *podium.Board) []byte {
	if gs := def.GroupSet; gs != nil {
		b = append(b, `,"group_set":{"max_members":`...)
		b = strconv.AppendInt(b, int64(gs.MaxMembers), 10)
		b = append(b, `,"max_per_player":`...)
		b = strconv.AppendInt(b, int64(gs.MaxPerPlayer), 10)
		b = append(b, `,"max_groups":`...)
		b = strconv.AppendInt(b, int64(gs.MaxGroups), 10)
		b = append(b, '}')
	}
	if gb := def.GroupBoard; gb != nil {
		b = append(b, `,"group_board":{"set":`...)
		b = appendString(b, gb.Set)
		b = append(b, `,"source":`...)
		b = appendString(b, gb.Source)
		b = append(b, `,"rule":`...)
		b = appendString(b, gb.Rule)
		b = append(b, `,"k":`...)
		b = strconv.AppendInt(b, int64(gb.K), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}
