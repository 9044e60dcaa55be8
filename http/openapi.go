package http

import (
	"bytes"
	"net/http"
	"time"

	"github.com/podiumhq/podium/openapi"
)

// openapiRoutes serves the OpenAPI description (openapi/openapi.yaml) as
// JSON. Like /v1/client.js it is a static document: query strings are
// ignored, it needs no key, no rate limit and no loaded indexes, and it
// may be cached (with an ETag, so a revalidation is a 304).
func (s *Server) openapiRoutes() {
	serve := func(w http.ResponseWriter, r *http.Request) {
		doc, etag, err := openapi.JSON()
		if err != nil { // openapi.yaml is broken: TestOpenAPI fails first
			s.writeError(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", etag)
		http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(doc))
	}
	s.mux.HandleFunc("GET /v1/openapi.json", serve)
	s.mux.HandleFunc("GET /openapi.json", serve)
}
