// Package openapi holds podium's OpenAPI 3.1 description of its HTTP API:
// openapi.yaml, the source (docs/openapi.yaml is a link to it: go:embed
// reads only files under the package's own directory), and openapi.json,
// its JSON form, which the server answers at /v1/openapi.json. The JSON is
// made from the YAML by the tests (go test ./openapi -update), not at run
// time, so the binary carries no YAML parser; TestJSONUpToDate fails when
// the two differ. http's TestOpenAPI keeps the spec true to the server in
// both directions.
package openapi

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"sync"
)

// YAML is the spec as written.
//
//go:embed openapi.yaml
var YAML []byte

// doc is the spec as JSON, with the keys in the YAML's order (paths in the
// order they are written), which encoding/json's maps would not keep.
//
//go:embed openapi.json
var doc []byte

var etag = sync.OnceValue(func() string {
	sum := sha256.Sum256(doc)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
})

// JSON returns the spec as JSON and an ETag for it. err is always nil; it
// stays for callers written when the JSON was converted at run time.
func JSON() (b []byte, tag string, err error) {
	return doc, etag(), nil
}
