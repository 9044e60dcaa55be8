package http

import (
	"net/http"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/tournament"
)

// Handler groups. The API's handlers are split by feature into small
// types (boardHandlers in boards.go, feedHandlers in feed.go, ...). Each
// holds, in its eng field, a small interface declared beside it that lists
// exactly the engine methods the group calls, and shares base (who is
// asking, the read rule, the body limit) and, for live endpoints, streamer.
// *engine.Engine implements every one of them today; wire assigns it to
// each group, so a feature module can stand in for one group by changing
// only that line.

// base is what every group shares: the request's principal (auth.go,
// authenticated once per request), the board read rule and the body limit.
type base struct {
	auth      authenticator
	acc       access
	maxBody   int64
	afterAuth func(r *http.Request) // tests: runs after principal accepted a key
}

// authenticator finds the key a secret belongs to: the engine's keyring
// (engine.Keys).
type authenticator interface {
	Authenticate(secret string) (*podium.APIKey, bool)
}

// access is what the read rule needs: a board by its id.
type access interface {
	Board(id string) (engine.BoardInfo, error)
}

// engineState is what the server itself asks the engine: whether it serves
// (api, readyz).
type engineState interface {
	Ready() bool
	Status() engine.Status
}

// wire builds the handler groups over e.
func (s *Server) wire(e *engine.Engine, cfg *Config) {
	s.state = e
	s.base = &base{auth: e.Keys(), acc: e, maxBody: cfg.MaxBody}
	live := &streamer{hub: s.hub, streamCfg: &s.streamCfg, origins: s.origins, clientIP: s.clientIP}
	s.findContests(e) // contests.go: the contests module, like sessions and evidence below
	s.boards = &boardHandlers{base: s.base, eng: e}
	s.scores = &scoreHandlers{base: s.base, eng: e, idem: e.Idempotency()}
	s.players = &playerHandlers{base: s.base, eng: e}
	s.admin = &adminHandlers{base: s.base, checker: e.Checker(), keys: e.Keys(), store: cfg.Store, contests: s.contests}
	// Sessions, evidence, review and tournaments are modules
	// (engine/module.go): their groups take the engine's module with the
	// interface they need, and without one answer 503.
	var ses sessionStore = noSessions{}
	var ev evidenceStore = noEvidence{}
	var rv reviewStore = noReview{}
	var tm tournamentModule = noTournaments{}
	var lm leagueModule = noLeagues{}
	var gm groupModule = noGroups{}
	for _, m := range e.Modules() {
		if x, ok := m.(sessionStore); ok {
			ses = x
		}
		if x, ok := m.(evidenceStore); ok {
			ev = x
		}
		if x, ok := m.(reviewStore); ok {
			rv = x
		}
		if x, ok := m.(tournamentModule); ok {
			tm = x
		}
		if x, ok := m.(leagueModule); ok {
			lm = x
		}
		if x, ok := m.(groupModule); ok {
			gm = x
		}
	}
	s.sessions = &sessionHandlers{base: s.base, eng: ses}
	s.evidence = &evidenceHandlers{base: s.base, eng: e, ev: ev}
	s.entries = &entryHandlers{base: s.base, eng: e, hist: rv, pages: s.pages, groups: gm}
	s.groups = &groupHandlers{base: s.base, mod: gm}
	s.review = &reviewHandlers{base: s.base, eng: e, rv: rv, ev: ev}
	s.feed = &feedHandlers{base: s.base, streamer: live, eng: findFeed(e)} // feed.go: the feed module
	s.leagues = &leagueHandlers{base: s.base, streamer: live, eng: e, mod: lm}
	s.streams = &streamHandlers{base: s.base, streamer: live, eng: e, feed: s.feed, leagues: s.leagues}
	s.tourneys = &tournamentHandlers{base: s.base, eng: e, mod: tm}
	s.admin.settlements = tm
	s.web = &pageHandlers{eng: e, writeError: s.writeError}
	s.webhooks = &webhookHandlers{base: s.base, wh: findWebhooks(e)} // webhooks.go: the webhooks module
	s.contest = &contestHandlers{base: s.base, streamer: live, eng: e, contests: s.contests, contestHub: s.contestHub, web: s.web}
}

// *engine.Engine serves every group but for what its modules and its
// keyring serve.
var (
	_ authenticator   = (*engine.Keys)(nil)
	_ keyAdmin        = (*engine.Keys)(nil)
	_ idempotent      = (*engine.Idempotency)(nil)
	_ access          = (*engine.Engine)(nil)
	_ engineState     = (*engine.Engine)(nil)
	_ boardStore      = (*engine.Engine)(nil)
	_ entryReader     = (*engine.Engine)(nil)
	_ scoreWriter     = (*engine.Engine)(nil)
	_ playerStore     = (*engine.Engine)(nil)
	_ indexChecker    = engine.Checker{}
	_ evidenceEngine  = (*engine.Engine)(nil)
	_ reviewEngine    = (*engine.Engine)(nil)
	_ tournamentStore = (*engine.Engine)(nil)

	_ tournamentModule = (*tournament.Module)(nil)
	_ tournamentModule = noTournaments{}
	_ pageReader       = (*engine.Engine)(nil)
	_ contestEngine    = (*engine.Engine)(nil)
)
