package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"go.yaml.in/yaml/v4"
)

var update = flag.Bool("update", false, "write openapi.json from openapi.yaml")

// TestJSONUpToDate: the embedded openapi.json is the conversion of
// openapi.yaml; -update writes it.
func TestJSONUpToDate(t *testing.T) {
	want, err := yamlToJSON(YAML)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, want) {
		t.Fatal("openapi.json is not the conversion of openapi.yaml: run go test ./openapi -update")
	}
}

func TestWriteJSON(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"OrderKept", "b: 1\na: 2\n", `{"b":1,"a":2}`},
		{"Scalars", "s: 'x'\nq: \"y\"\nn: null\nt: true\nf: 1.5\ni: -3\nd: '2026-11-30'\nc: 200\n",
			`{"s":"x","q":"y","n":null,"t":true,"f":1.5,"i":-3,"d":"2026-11-30","c":200}`},
		{"NumericKeyIsString", "'200': {a: [1, {b: c}]}\n404: x\n", `{"200":{"a":[1,{"b":"c"}]},"404":"x"}`},
		{"DateStaysText", "d: 2026-11-30\nt: 2026-11-30T10:00:00.000Z\n", `{"d":"2026-11-30","t":"2026-11-30T10:00:00.000Z"}`},
		{"AliasExpanded", "x: &h {a: 1}\ny: *h\n", `{"x":{"a":1},"y":{"a":1}}`},
		{"Escapes", "m: \"a\\\"b<\"\n", `{"m":"a\"b\u003c"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tc.yaml), &n); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := writeJSON(&buf, &n); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Fatalf("got %s, want %s", buf.String(), tc.want)
			}
		})
	}
	t.Run("ErrKeyNotScalar", func(t *testing.T) {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte("? [a, b]\n: 1\n"), &n); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(&bytes.Buffer{}, &n); err == nil {
			t.Fatal("a sequence as a key was converted")
		}
	})
}

// TestJSON: the embedded spec converts to JSON with the same content as
// the YAML (compared through a generic decode of both).
func TestJSON(t *testing.T) {
	b, etag, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if etag == "" || !json.Valid(b) {
		t.Fatalf("etag %q, valid JSON %v", etag, json.Valid(b))
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(b, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(YAML, &fromYAML); err != nil {
		t.Fatal(err)
	}
	// Through JSON again, so that both sides have JSON's types.
	y, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatal(err)
	}
	var again any
	json.Unmarshal(y, &again)
	j1, _ := json.Marshal(fromJSON)
	j2, _ := json.Marshal(again)
	if !bytes.Equal(j1, j2) {
		t.Fatal("the JSON form differs from the YAML (an unquoted date in the YAML stays text in the JSON: quote it)")
	}
}
