package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/openapi"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// newSpecServer is a server with every optional part on (contests, rate
// limits: every route is registered, every header sent), the limiter on
// the server's fake clock; board "tight" admits one score a minute.
func newSpecServer(t *testing.T) *server {
	t.Helper()
	return newSpecServerAt(t, nil)
}

// newSpecServerAt is newSpecServer, calling before with the database's
// path before the database is opened (nil: not).
func newSpecServerAt(t *testing.T, before func(path string)) *server {
	t.Helper()
	var s *server
	s = newServerAt(t, stream.Config{}, false, func(hc *podiumhttp.Config) {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		contestService(t, hc.Engine) // the server serves the engine's contests
		hc.RateLimits = &podiumhttp.RateLimits{
			Limiter: ratelimit.New(ratelimit.Config{Now: func() time.Time { return s.clock.Now() }, Logger: log}),
			Submit:  lim("100000/1m"), Key: lim("100000/1m"), Anon: lim("100000/1m"), AuthFail: lim("1000/1m"),
			Boards: map[string]ratelimit.Limit{"tight": lim("1/1m")},
		}
	}, sqlite.Options{Sync: "normal"}, before)
	return s
}

// TestOpenAPIRoutes: every route the server registers is in the spec, every
// operation of the spec is a route, and each API route's spec lists
// exactly the query parameters the route accepts.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadSpec(t)
	srv := newSpecServer(t).srv
	served := map[string]bool{}
	for _, pattern := range srv.Routes() {
		method, path := specPath(pattern)
		served[method+" "+path] = true
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("the server serves %q, but openapi.yaml has no %s %s", pattern, method, path)
			continue
		}
		op := item.GetOperation(method)
		var inSpec []string
		for _, p := range append(item.Parameters, op.Parameters...) {
			if p.Value != nil && p.Value.In == "query" {
				inSpec = append(inSpec, p.Value.Name)
			}
		}
		sort.Strings(inSpec)
		accepted, isAPI := srv.RouteQuery(pattern)
		sort.Strings(accepted)
		if !isAPI {
			if len(inSpec) > 0 {
				t.Errorf("%s ignores query strings, but openapi.yaml lists query parameters %v", pattern, inSpec)
			}
			continue
		}
		if !slices.Equal(inSpec, accepted) {
			t.Errorf("%s accepts query parameters %v, openapi.yaml lists %v", pattern, accepted, inSpec)
		}
	}
	t.Logf("%d routes, %d paths in the spec", len(srv.Routes()), doc.Paths.Len())
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !served[method+" "+path] {
				t.Errorf("openapi.yaml has %s %s, which the server does not serve", method, path)
			}
		}
	}
}

// TestOpenAPIServed: /v1/openapi.json and /openapi.json answer the spec as
// JSON, cacheable, with an ETag that a revalidation matches.
func TestOpenAPIServed(t *testing.T) {
	s := newSpecServer(t)
	want, etag, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(want) || !bytes.HasPrefix(want, []byte(`{"openapi":"3.1.`)) {
		t.Fatalf("the converted spec is not an OpenAPI 3.1 JSON document: %.100s", want)
	}
	for _, path := range []string{"/v1/openapi.json", "/openapi.json?cache-buster=1"} {
		r := s.do("GET", path, "", nil)
		if r.status != 200 || !bytes.Equal(r.body, want) {
			t.Fatalf("%s: %d, %d bytes; want the spec (%d bytes)", path, r.status, len(r.body), len(want))
		}
		if ct, cc := r.header.Get("Content-Type"), r.header.Get("Cache-Control"); ct != "application/json" || !strings.Contains(cc, "max-age") {
			t.Errorf("%s: Content-Type %q, Cache-Control %q", path, ct, cc)
		}
		if r.header.Get("ETag") != etag {
			t.Errorf("%s: ETag %q, want %q", path, r.header.Get("ETag"), etag)
		}
		if r := s.do("GET", path, "", nil, "If-None-Match", etag); r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s with If-None-Match: %d %q, want 304", path, r.status, r.body)
		}
	}
}

// TestOpenAPIExamples: the examples of the spec's schemas fit them
// (kin-openapi does not check a 3.1 schema's examples when it loads it).
func TestOpenAPIExamples(t *testing.T) {
	doc := loadSpec(t)
	n := 0
	for name, s := range doc.Components.Schemas {
		for i, ex := range s.Value.Examples {
			n++
			// through JSON, so that numbers are float64 as in an answer
			b, _ := json.Marshal(ex)
			var v any
			json.Unmarshal(b, &v)
			if err := s.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("example %d of schema %s does not fit it: %v", i, name, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no examples found")
	}
}
