package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v4"
)

// yamlToJSON converts the YAML spec to JSON, keeping the keys' order.
func yamlToJSON(src []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(src, &n); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &n); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return buf.Bytes(), nil
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
