package http

import (
	"net/http"
	"slices"
)

// routeMux is the server's ServeMux, remembering the patterns registered on
// it, so that what the server serves can be listed (Server.Routes) without a
// second copy of the route table: the OpenAPI test compares it with the spec.
type routeMux struct {
	*http.ServeMux
	patterns []string
	// query holds the query parameters each API route accepts, by pattern.
	// Server.api hands them over in next (its result is the argument of
	// the HandleFunc call that follows at once); nil next: not an API
	// route, which ignores query strings.
	query map[string][]string
	next  []string
}

func newRouteMux() *routeMux {
	return &routeMux{ServeMux: http.NewServeMux(), query: map[string][]string{}}
}

// Handle registers h for pattern, as http.ServeMux.Handle does.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
	if m.next != nil {
		m.query[pattern] = m.next
		m.next = nil
	}
}

// HandleFunc registers f for pattern, as http.ServeMux.HandleFunc does.
func (m *routeMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Routes returns the patterns of every route the server registered
// ("GET /v1/boards/{board}"), sorted; the server's route table and the
// handlers that add routes of their own (contests, sessions, the pages) are
// all in it.
func (s *Server) Routes() []string {
	out := slices.Clone(s.mux.patterns)
	slices.Sort(out)
	return out
}

// RouteQuery returns the query parameters the API route registered with
// pattern accepts (any other is 400), and false for a route that is not an
// API route (the pages, assets, health and metrics ignore query strings).
func (s *Server) RouteQuery(pattern string) ([]string, bool) {
	q, ok := s.mux.query[pattern]
	return slices.Clone(q), ok
}
