// Package openapi holds podium's OpenAPI 3.1 description of its HTTP API,
// openapi.yaml (docs/openapi.yaml is a link to it: go:embed reads only
// files under the package's own directory), and its JSON form, which the
// server answers at /v1/openapi.json. The spec is the source of truth for
// clients; http's TestOpenAPI keeps it true to the server in both
// directions.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v4"
)

// YAML is the spec as written.
//
//go:embed openapi.yaml
var YAML []byte

type converted struct {
	json []byte
	etag string
}

var convert = sync.OnceValues(func() (converted, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(YAML, &doc); err != nil {
		return converted{}, fmt.Errorf("openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &doc); err != nil {
		return converted{}, fmt.Errorf("openapi.yaml: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return converted{json: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}, nil
})

// JSON returns the spec as JSON, converted from YAML once, and an ETag for
// it. The keys keep the order they have in the YAML (paths in the order
// they are written), which encoding/json's maps would not.
func JSON() (doc []byte, etag string, err error) {
	c, err := convert()
	return c.json, c.etag, err
}

// writeJSON writes a YAML node as JSON. Anchors and aliases are expanded;
// a mapping key must be a scalar.
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a key that is not a scalar", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			b, _ := json.Marshal(k.Value)
			buf.Write(b)
			buf.WriteByte(':')
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		if n.Tag == "!!timestamp" { // a date stays the text written, not a time.Time
			b, _ := json.Marshal(n.Value)
			buf.Write(b)
			return nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}
