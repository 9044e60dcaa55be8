package http

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ratelimit"
)

// RateLimits configures the rate limits of the API (docs/API.md "Rate
// limits"). A nil Limiter or a zero Limit means no limit.
//
// Requests are charged to a principal: "key:<id>" for an API key. The
// player sessions of issue 9 plug in as another kind ("session:<id>" or
// "player:<id>") in ratePrincipal, with limits of their own in Principals;
// the rest of this file only sees the principal string.
type RateLimits struct {
	Limiter *ratelimit.Limiter
	// Submit limits each principal's submissions to each board (POST
	// /v1/boards/{board}/scores; a batch, POST /v1/scores, is one request
	// of the principal's bucket for board "*"). Boards overrides it per
	// board.
	Submit ratelimit.Limit
	Boards map[string]ratelimit.Limit
	// Key limits every other request of an API key.
	Key ratelimit.Limit
	// Principals overrides Submit and Key for other kinds of principal
	// (by kind, e.g. "session").
	Principals map[string]PrincipalLimits
	// Anon limits the requests without credentials, per client address
	// (IPv6: per /64).
	Anon ratelimit.Limit
	// AuthFail limits failed authentications per client address: once an
	// address has spent it, its requests with credentials get 429, valid
	// or not, until the bucket refills.
	AuthFail ratelimit.Limit
}

// PrincipalLimits are the limits of one kind of principal.
type PrincipalLimits struct {
	Submit, Other ratelimit.Limit
}

// ratePrincipal names who the request is charged to (kind and id), or
// ok=false without valid credentials (anonymous); bad reports credentials
// that were sent and refused.
func (s *Server) ratePrincipal(r *http.Request) (kind, id string, ok, bad bool) {
	k, err := s.principal(r)
	if err == nil && k == nil && r.Pattern == "GET /v1/stream" && r.URL.Query().Get("key") != "" {
		var found bool
		if k, found = s.auth.Authenticate(r.URL.Query().Get("key")); !found {
			return "", "", false, true
		}
	}
	if err != nil {
		return "", "", false, true
	}
	if k == nil {
		return "", "", false, false
	}
	if k.Player != "" {
		// A player session: the player's sessions share one bucket, so
		// that more devices do not mean more requests.
		return "player", k.Player, true, false
	}
	return "key", k.ID, true, false
}

func hasCredentials(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || (r.Pattern == "GET /v1/stream" && r.URL.Query().Has("key"))
}

// rateLimit charges the request to its bucket; when the bucket is empty
// it answers 429 and returns false. It sets RateLimit-Policy and
// RateLimit on every limited answer. It never fails a request because the
// limiter's store is down (the limiter then decides in process).
func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request) bool {
	rl := s.rates
	if rl == nil || rl.Limiter == nil {
		return true
	}
	ctx := r.Context()
	// The client's address and the bucket's name are worked out only for
	// a limit that applies: with the limits off a public read parsed its
	// address twice and named a bucket for nothing (2% of a top-100 read).
	var ip string
	addr := func() string {
		if ip == "" {
			ip = rateAddr(s.clientIP(r))
		}
		return ip
	}
	if hasCredentials(r) && !rl.AuthFail.Unlimited() {
		if res := rl.Limiter.Take(ctx, ratelimit.AuthFail.Scope, ratelimit.AuthFail.Name(addr()), rl.AuthFail, 0); !res.Allowed {
			return s.refuse(w, r, "auth", rl.AuthFail, res, "too many failed authentications from this address")
		}
	}
	kind, id, ok, bad := s.ratePrincipal(r)
	if bad {
		if res := rl.Limiter.Take(ctx, ratelimit.AuthFail.Scope, ratelimit.AuthFail.Name(addr()), rl.AuthFail, 1); !res.Allowed {
			return s.refuse(w, r, "auth", rl.AuthFail, res, "too many failed authentications from this address")
		}
		return true // the handler answers 401
	}
	var scope, bucket string
	var lim ratelimit.Limit
	switch {
	case !ok:
		if lim = rl.Anon; lim.Unlimited() {
			return true
		}
		scope, bucket = ratelimit.Anon.Scope, ratelimit.Anon.Name(addr())
	case r.Pattern == "POST /v1/boards/{board}/scores" || r.Pattern == "POST /v1/scores":
		board := r.PathValue("board")
		lim = rl.Submit
		if pl, found := rl.Principals[kind]; found {
			lim = pl.Submit
		}
		if b, found := rl.Boards[board]; found && board != "" {
			lim = b
		}
		if lim.Unlimited() {
			return true
		}
		if board == "" {
			board = "*"
		}
		scope, bucket = ratelimit.Submit.Scope, ratelimit.Submit.Name(kind, id, board)
	default:
		lim = rl.Key
		if pl, found := rl.Principals[kind]; found {
			lim = pl.Other
		}
		if lim.Unlimited() {
			return true
		}
		scope, bucket = ratelimit.Request.Scope, ratelimit.Request.Name(kind, id)
	}
	res := rl.Limiter.Take(ctx, scope, bucket, lim, 1)
	if !res.Allowed {
		return s.refuse(w, r, scope, lim, res, "")
	}
	setRateHeaders(w.Header(), scope, lim, res)
	return true
}

// refuse answers 429 with the headers and returns false.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, scope string, lim ratelimit.Limit, res ratelimit.Result, why string) bool {
	h := w.Header()
	setRateHeaders(h, scope, lim, res)
	h.Set("Retry-After", strconv.FormatInt(ceilSeconds(res.RetryAfter), 10))
	if why == "" {
		why = "too many requests"
	}
	s.writeError(w, r, podium.Errorf(podium.ECodeRateLimited, "%s: the limit is %d per %s; retry in %ds",
		why, lim.Quota, lim.Window, ceilSeconds(res.RetryAfter)))
	return false
}

// setRateHeaders writes the fields of draft-ietf-httpapi-ratelimit-headers-11
// (May 2026), section 3 and 4: the policy as a quota q per window w seconds,
// and the bucket's remaining quota r and seconds t until it is full again.
// The policy is named after podium's scope ("submit", "request", "anon",
// "auth").
func setRateHeaders(h http.Header, scope string, lim ratelimit.Limit, res ratelimit.Result) {
	name := `"` + scope + `"`
	h.Set("RateLimit-Policy", name+";q="+strconv.Itoa(lim.Quota)+";w="+strconv.FormatInt(ceilSeconds(lim.Window), 10))
	h.Set("RateLimit", name+";r="+strconv.Itoa(res.Remaining)+";t="+strconv.FormatInt(ceilSeconds(res.Reset), 10))
}

func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// rateAddr is the bucket name of a client address: an IPv4 address, or
// the /64 of an IPv6 one (one subscriber usually holds a whole /64).
func rateAddr(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return strings.ReplaceAll(host, ":", "_")
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
