package http

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// pageHandlers serves the embedded pages.
type pageHandlers struct {
	eng        pageReader
	writeError func(w http.ResponseWriter, r *http.Request, err error) // the Server's (error.go)
}

// pageReader is what the pages ask: whether a board is public, and whether
// the engine has loaded (until then a board is not known to be missing).
type pageReader interface {
	Board(id string) (engine.BoardInfo, error)
	Ready() bool
}

// assets holds the live pages and the JavaScript client, served from the
// binary: no build step, no CDN, works offline.
//
//go:embed assets
var assets embed.FS

func (s *Server) webRoutes() {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err)
	}
	static := http.FileServerFS(sub)
	s.mux.HandleFunc("GET /{$}", s.web.page("index.html"))
	s.mux.HandleFunc("GET /boards/{board}", s.web.page("board.html"))
	s.mux.HandleFunc("GET /leagues/{board}", s.web.page("league.html")) // a league cohort, live (league.js)
	s.mux.HandleFunc("GET /admin", s.web.page("admin.html"))            // the console: a client of the public API (docs/CONSOLE.md)
	s.mux.HandleFunc("GET /v1/client.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/podium.js"
		static.ServeHTTP(w, r2)
	})
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets", cacheFor(static, "public, max-age=300")))
}

func cacheFor(h http.Handler, v string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", v)
		h.ServeHTTP(w, r)
	})
}

// page serves an HTML page; the page itself reads the API from the browser.
// A board page for a board that does not exist is the same page with status
// 404: its script finds board_not_found and says so with a link to the list.
// While the indexes load nothing is known yet, so the page is served 200 and
// its script retries.
func (s *pageHandlers) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if b := r.PathValue("board"); b != "" {
			if !podium.ValidBoardID(b) {
				status = http.StatusNotFound
			} else if bi, err := s.eng.Board(b); (err != nil || !bi.Public) && s.eng.Ready() {
				// A page is read without credentials (a browser's
				// navigation sends none): a private board is as unknown
				// (auth.go, "Private ids").
				status = http.StatusNotFound
			}
		}
		body, err := assets.ReadFile("assets/" + name)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		// No page may be framed (clickjacking; a site embeds a board with
		// /v1/client.js instead, docs/CLIENT.md), none sends a referrer,
		// and none takes a <base> that would move its scripts' origin.
		csp := "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if name == "admin.html" {
			// The console holds an admin key: no native form submission
			// (every form is sent by script, so a key can never land in a
			// URL), never cached.
			csp += "; form-action 'none'"
			h.Set("Cache-Control", "no-store")
		}
		h.Set("Content-Security-Policy", csp+"; base-uri 'none'")
		w.WriteHeader(status)
		w.Write(body)
	}
}
