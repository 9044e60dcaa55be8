package http

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/podiumhq/podium"
)

// origins decides which web origins may use podium from a browser. It
// governs CORS (which pages may read answers) and the live endpoints
// (which pages may open a stream). A request without an Origin header (a
// program, curl) or from podium's own pages (the origin's host is the
// request's Host) is always allowed.
//
// The default is any origin: podium holds no ambient credentials (no
// cookies; a key travels in the Authorization header or in ?key=, which
// the page must already have), so a page on another site can read only
// what its own visitor could read by asking directly, and public boards
// are meant to be embedded anywhere.
type origins struct {
	any      bool
	patterns []string // lower-case "scheme://host[:port]", path.Match patterns
}

// CheckOrigins validates the patterns of --allowed-origins: "*" alone
// (any origin), or origins like "https://example.com",
// "http://localhost:3000" and "https://*.example.com".
func CheckOrigins(patterns []string) error {
	for _, p := range patterns {
		if p == "*" {
			if len(patterns) > 1 {
				return fmt.Errorf("allowed origins: \"*\" allows every origin and cannot be combined with others")
			}
			continue
		}
		scheme, host, ok := strings.Cut(p, "://")
		if !ok || (scheme != "http" && scheme != "https") || host == "" || strings.ContainsAny(host, "/?#") {
			return fmt.Errorf("allowed origins: %q is not an origin like https://example.com or https://*.example.com", p)
		}
		if _, err := path.Match(strings.ToLower(p), ""); err != nil {
			return fmt.Errorf("allowed origins: %q: %v", p, err)
		}
	}
	return nil
}

func newOrigins(patterns []string) origins {
	if len(patterns) == 0 || len(patterns) == 1 && patterns[0] == "*" {
		return origins{any: true}
	}
	o := origins{}
	for _, p := range patterns {
		o.patterns = append(o.patterns, strings.ToLower(strings.TrimSuffix(p, "/")))
	}
	return o
}

// allows reports whether the request's Origin may use the API.
func (o origins) allows(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || o.any {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (sandboxed frames, files) and garbage
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true // podium's own pages
	}
	target := strings.ToLower(u.Scheme + "://" + u.Host)
	for _, p := range o.patterns {
		if ok, _ := path.Match(p, target); ok {
			return true
		}
	}
	return false
}

// checkStreamOrigin refuses a live stream opened by a page whose origin
// is not allowed: a browser would not let it read the stream anyway, and
// a stream holds server resources.
func (s *streamer) checkStreamOrigin(r *http.Request) error {
	if s.origins.allows(r) {
		return nil
	}
	return podium.Errorf(podium.ECodeForbidden, "pages from %s may not open streams on this server (see --allowed-origins)", r.Header.Get("Origin"))
}

// cors lets allowed pages on other sites read answers and embed the live
// client, and answers preflight requests itself. It reports whether it
// answered the request.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	h := w.Header()
	if !s.origins.any {
		h.Add("Vary", "Origin")
	}
	if !s.origins.allows(r) {
		if preflight {
			s.writeError(w, r, podium.Errorf(podium.ECodeForbidden, "pages from %s may not use this server (see --allowed-origins)", origin))
			return true
		}
		return false // no CORS headers: the browser keeps the answer from the page
	}
	if s.origins.any {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	h.Set("Access-Control-Expose-Headers", exposedHeaders)
	if preflight {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}

// exposedHeaders are the answer headers a page on another origin may read:
// what a browser client needs to retry, pace itself and save exports.
const exposedHeaders = "Retry-After, Idempotent-Replayed, Idempotent-Reconstructed, RateLimit, RateLimit-Policy, " +
	"ETag, Content-Disposition, Podium-Seq, Podium-Export-Consistent"
