package http

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/stream"
)

// contestHandlers serves CTF contests (package ctf): the API, the live
// stream (contests_stream.go) and the contest page.
type contestHandlers struct {
	*base
	*streamer
	eng        contestEngine
	contests   *ctf.Service
	contestHub *stream.Hub // contests_stream.go
	web        *pageHandlers
}

// contestEngine is what the contest handlers ask the engine: the clock,
// whether it has loaded, and players' names.
type contestEngine interface {
	Now() time.Time
	Ready() bool
	Player(id string) (podium.Player, error)
}

// contestModule is the engine's contests module (package ctf): its
// service, nil if the store keeps no contests.
type contestModule interface {
	Service() *ctf.Service
}

// findContests takes the contests from e's contests module (a module,
// engine/module.go, found as handlers.go's wire finds sessions and
// evidence), and makes the hub of their streams; without the module or
// with a store that keeps no contests, there are no contest routes.
func (s *Server) findContests(e *engine.Engine) {
	for _, m := range e.Modules() {
		if x, ok := m.(contestModule); ok {
			s.contests = x.Service()
		}
	}
	if s.contests != nil {
		s.contestHub = newContestHub(s.contests, e, s.hub) // contests_stream.go
	}
}

// CTF contests (package ctf): /v1/contests. Contest ids follow board ids
// and are covered by a key's board prefixes. The judge (a game server
// holding a submit key) reports verdicts; podium never sees a flag.

func (s *Server) contestRoutes() {
	if s.contests == nil {
		return
	}
	s.mux.HandleFunc("GET /v1/contests", s.api(s.contest.listContests))
	s.mux.HandleFunc("GET /v1/contests/{contest}", s.api(s.contest.getContest))
	s.mux.HandleFunc("PUT /v1/contests/{contest}", s.api(s.contest.putContest))
	s.mux.HandleFunc("DELETE /v1/contests/{contest}", s.api(s.contest.deleteContest))
	s.mux.HandleFunc("DELETE /v1/contests/{contest}/challenges/{challenge}", s.api(s.contest.deleteChallenge))
	s.mux.HandleFunc("POST /v1/contests/{contest}/unfreeze", s.api(s.contest.unfreezeContest))
	s.mux.HandleFunc("POST /v1/contests/{contest}/refreeze", s.api(s.contest.refreezeContest))
	s.mux.HandleFunc("PUT /v1/contests/{contest}/challenges/{challenge}", s.api(s.contest.putChallenge, "confirm", "preview"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/challenges", s.api(s.contest.contestChallenges, "view"))
	s.mux.HandleFunc("POST /v1/contests/{contest}/attempts", s.api(s.contest.postAttempt))
	s.mux.HandleFunc("GET /v1/contests/{contest}/attempts", s.api(s.contest.contestAttempts, "after", "limit", "team", "challenge", "correct"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/standings", s.api(s.contest.contestStandings, "view", "offset", "limit", "include_hidden", "at", "solves"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/standings/{team}", s.api(s.contest.contestTeam, "view"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/first-bloods", s.api(s.contest.contestFirstBloods, "view"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/snapshots", s.api(s.contest.contestSnapshots))
	s.mux.HandleFunc("GET /v1/contests/{contest}/chart", s.api(s.contest.contestChart, "view", "top"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/ctftime", s.api(s.contest.contestCTFtime, "view"))
	s.mux.HandleFunc("GET /v1/contests/{contest}/export", s.api(s.contest.exportContest, "format", "view", "include_hidden")) // contests_export.go
	s.timing["GET /v1/contests/{contest}/export"] = untimed                                                                   // bounds each chunk's write
	s.mux.HandleFunc("GET /v1/contests/{contest}/stream", s.api(s.contest.contestSSE, "limit", "last_event_id", "view"))
	s.timing["GET /v1/contests/{contest}/stream"] = untimed
	s.mux.HandleFunc("GET /contests/{contest}", s.contest.contestPage)
}

// contestPage serves the live contest page; for a contest that does not
// exist, with status 404 (its script says so).
func (s *contestHandlers) contestPage(w http.ResponseWriter, r *http.Request) {
	// A page is read without credentials (a browser's navigation sends
	// none): a private contest is as unknown (auth.go, "Private ids").
	if c, err := s.contests.Contest(r.PathValue("contest")); (err != nil || !c.Public) && s.eng.Ready() {
		w = notFoundWriter{w}
	}
	s.web.page("contest.html")(w, r)
}

// notFoundWriter turns the page's 200 into a 404.
type notFoundWriter struct{ http.ResponseWriter }

func (w notFoundWriter) WriteHeader(code int) {
	if code == http.StatusOK {
		code = http.StatusNotFound
	}
	w.ResponseWriter.WriteHeader(code)
}

// jtime is a time written as podium writes times: RFC 3339, UTC, ms.
type jtime time.Time

func (t jtime) MarshalJSON() ([]byte, error) { return appendTime(nil, time.Time(t)), nil }

func jt(t time.Time) *jtime {
	if t.IsZero() {
		return nil
	}
	j := jtime(t)
	return &j
}

func writeAny(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writeJSON(w, status, b)
	return nil
}

type contestJSON struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Start      *jtime          `json:"start"`
	End        *jtime          `json:"end"`
	Freeze     *jtime          `json:"freeze"`
	Revealed   bool            `json:"revealed"`
	FirstBlood [3]int64        `json:"first_blood"`
	BloodRule  string          `json:"blood_rule"`
	Public     bool            `json:"public"`
	Meta       json.RawMessage `json:"meta"`
	CreatedAt  *jtime          `json:"created_at"`
	UpdatedAt  *jtime          `json:"updated_at"`
	State      string          `json:"state"`
}

// contestState says where a contest is at t: upcoming, running, frozen
// (running, public standings frozen), ended (frozen until revealed) or
// final (ended and revealed, or ended without a freeze).
func contestState(c *contest.Contest, t time.Time) string {
	frozen := !c.FrozenAt(t).IsZero()
	switch {
	case t.Before(c.Start):
		return "upcoming"
	case t.Before(c.End) && frozen:
		return "frozen"
	case t.Before(c.End):
		return "running"
	case frozen:
		return "ended"
	}
	return "final"
}

func (s *contestHandlers) contestOut(c *contest.Contest) contestJSON {
	out := contestJSON{ID: c.ID, Title: c.Title, Start: jt(c.Start), End: jt(c.End), Revealed: c.Revealed,
		FirstBlood: c.FirstBlood, BloodRule: c.BloodRule, Public: c.Public, Meta: c.Meta, CreatedAt: jt(c.CreatedAt), UpdatedAt: jt(c.UpdatedAt),
		State: contestState(c, s.eng.Now())}
	if c.Freeze != nil {
		out.Freeze = jt(*c.Freeze)
	}
	return out
}

// contestFor returns a contest the request may read: public ones need no
// key (a key sent must be valid: 401 whatever the id), others the read
// scope on its id; a contest the request may not read is the 404 of an
// unknown one (auth.go, "Private ids").
func (s *contestHandlers) contestFor(r *http.Request) (contest.Contest, *podium.APIKey, error) {
	k, err := s.principal(r)
	if err != nil {
		return contest.Contest{}, nil, err
	}
	c, err := s.contests.Contest(r.PathValue("contest"))
	if err != nil {
		return c, nil, err
	}
	if !mayRead(k, c.ID, c.Public) {
		return contest.Contest{}, nil, ctf.ContestNotFound(c.ID)
	}
	return c, k, nil
}

func (s *contestHandlers) listContests(w http.ResponseWriter, r *http.Request) error {
	k, err := s.principal(r)
	if err != nil {
		return err
	}
	out := []contestJSON{}
	for _, c := range s.contests.Contests() {
		if c.Public || (k != nil && k.Allows(podium.ScopeRead, c.ID)) {
			out = append(out, s.contestOut(&c))
		}
	}
	return writeAny(w, http.StatusOK, map[string]any{"contests": out})
}

func (s *contestHandlers) getContest(w http.ResponseWriter, r *http.Request) error {
	c, _, err := s.contestFor(r)
	if err != nil {
		return err
	}
	return writeAny(w, http.StatusOK, s.contestOut(&c))
}

type contestBody struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Start      string          `json:"start"`
	End        string          `json:"end"`
	Freeze     *string         `json:"freeze"`
	FirstBlood []int64         `json:"first_blood"`
	BloodRule  string          `json:"blood_rule"`
	Public     bool            `json:"public"`
	Meta       json.RawMessage `json:"meta"`
}

func parseTime(field, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, podium.Errorf(podium.ECodeInvalid, "%s must be an RFC 3339 time such as 2026-12-05T10:00:00Z", field)
	}
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, podium.Errorf(podium.ECodeInvalid, "%s must be between the years 1970 and 9999", field)
	}
	return t, nil
}

func (s *contestHandlers) putContest(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	if !podium.ValidBoardID(id) {
		return podium.Errorf(podium.ECodeInvalid, "contest id must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body contestBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if body.ID != "" && body.ID != id {
		return podium.Errorf(podium.ECodeInvalid, "id %q in the body differs from the contest %q in the path", body.ID, id)
	}
	c := &contest.Contest{ID: id, Title: body.Title, BloodRule: body.BloodRule, Public: body.Public, Meta: body.Meta}
	if body.Start == "" || body.End == "" {
		return podium.Errorf(podium.ECodeInvalid, "start and end are required")
	}
	if c.Start, err = parseTime("start", body.Start); err != nil {
		return err
	}
	if c.End, err = parseTime("end", body.End); err != nil {
		return err
	}
	if body.Freeze != nil {
		f, err := parseTime("freeze", *body.Freeze)
		if err != nil {
			return err
		}
		c.Freeze = &f
	}
	switch len(body.FirstBlood) {
	case 0:
	case 3:
		copy(c.FirstBlood[:], body.FirstBlood)
	default:
		return podium.Errorf(podium.ECodeInvalid, "first_blood must list 3 percents: first, second and third solver")
	}
	if err := c.Normalize(); err != nil {
		return err
	}
	out, created, err := s.contests.PutContest(r.Context(), c)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeAny(w, status, s.contestOut(&out))
}

// emptyBody accepts no body, {} or an empty object with whitespace.
func emptyBody(r *http.Request, limit int64) error {
	buf, err := readBody(r, limit)
	if err != nil {
		return err
	}
	defer putBody(buf)
	if len(buf.Bytes()) == 0 {
		return nil
	}
	var none struct{}
	return decodeStrict(buf.Bytes(), &none)
}

type challengeJSON struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Category string          `json:"category"`
	Order    int64           `json:"order"`
	Hidden   bool            `json:"hidden"`
	Scoring  contest.Scoring `json:"scoring"`
}

func challengeOut(ch *contest.Challenge) challengeJSON {
	return challengeJSON{ID: ch.ID, Name: ch.Name, Category: ch.Category, Order: ch.Order, Hidden: ch.Hidden, Scoring: ch.Scoring}
}

type attemptBody struct {
	Team      string `json:"team"`
	Challenge string `json:"challenge"`
	Correct   *bool  `json:"correct"`
}

type attemptJSON struct {
	ID        int64  `json:"id"`
	Team      string `json:"team"`
	Challenge string `json:"challenge"`
	Result    string `json:"result"`
	Correct   bool   `json:"correct"`
	At        *jtime `json:"at"`
	Key       string `json:"key"`
	Seq       uint64 `json:"seq,omitempty"`
}

func attemptOut(a *contest.Attempt) attemptJSON {
	return attemptJSON{ID: a.ID, Team: a.Team, Challenge: a.Challenge, Result: a.Result, Correct: a.Correct, At: jt(a.At), Key: a.Key, Seq: a.Seq}
}

// postAttempt records a verdict of the judge (submit scope on the
// contest). A correct one is a solve, answered with the team's live
// standing. With an Idempotency-Key, a retry gets the attempt it logged
// (Idempotent-Replayed: true), with the standing as it is now.
func (s *contestHandlers) postAttempt(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	k, err := s.require(r, podium.ScopeSubmit, id)
	if err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body attemptBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if body.Correct == nil {
		return podium.Errorf(podium.ECodeInvalid, "correct is required: true for a right flag, false for a wrong one")
	}
	idem := r.Header.Get("Idempotency-Key")
	if len(idem) > 255 {
		return podium.Errorf(podium.ECodeInvalid, "Idempotency-Key is longer than 255 bytes")
	}
	o, err := s.contests.Attempt(r.Context(), id, body.Team, body.Challenge, *body.Correct, k.ID, idem)
	if err != nil {
		return err
	}
	if o.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	resp := map[string]any{"contest": id, "attempt": attemptOut(&o.Attempt), "standing": nil}
	if o.Standing != nil {
		resp["standing"] = s.standingOut(o.Standing, true)
		resp["challenge"] = map[string]any{"id": body.Challenge, "value": o.Value, "solves": o.Solves}
	}
	return writeAny(w, http.StatusOK, resp)
}

func (s *contestHandlers) contestAttempts(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	after, err := queryInt(r, "after", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	f := ctf.AttemptFilter{}
	f.Team, _ = queryValue(r, "team")
	f.Challenge, _ = queryValue(r, "challenge")
	if v, ok := queryValue(r, "correct"); ok && v != "" {
		c, err := queryBool(r, "correct")
		if err != nil {
			return err
		}
		f.Correct = &c
	}
	list, next, err := s.contests.FilterAttempts(r.Context(), id, int64(after), limit, f)
	if err != nil {
		return err
	}
	out := make([]attemptJSON, len(list))
	for i := range list {
		out[i] = attemptOut(&list[i])
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": id, "attempts": out, "next_after": next})
}

// appendContestProblems appends the contest_differences of POST
// /v1/admin/check.
func appendContestProblems(b []byte, ps []ctf.Problem) []byte {
	b = appendList(append(b, `,"contest_differences":[`...), ps, func(b []byte, p *ctf.Problem) []byte {
		b = append(b, `{"contest":`...)
		b = appendString(b, p.Contest)
		b = append(b, `,"what":`...)
		b = appendString(b, p.What)
		return append(b, '}')
	})
	return append(b, ']')
}
