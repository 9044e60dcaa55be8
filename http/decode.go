package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/podiumhq/podium"
)

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads a request body of at most limit bytes after checking that
// it is declared as JSON. The buffer goes back to the pool with putBody.
func readBody(r *http.Request, limit int64) (*bytes.Buffer, error) {
	// A body declared as something else (a form, text) is refused; one sent
	// without any Content-Type is read as JSON, as most clients mean it.
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, podium.Errorf(podium.ECodeUnsupportedType, "the body must be application/json, not %s", ct)
		}
	}
	if r.ContentLength > limit {
		return nil, podium.Errorf(podium.ECodeTooLarge, "the body is larger than %d bytes", limit)
	}
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	if err != nil {
		putBody(buf)
		return nil, podium.Errorf(podium.ECodeInvalid, "could not read the body: %v", err)
	}
	if int64(buf.Len()) > limit {
		putBody(buf)
		return nil, podium.Errorf(podium.ECodeTooLarge, "the body is larger than %d bytes", limit)
	}
	return buf, nil
}

func putBody(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bodyPool.Put(b)
	}
}

// decodeStrict decodes one JSON value into v, rejecting unknown fields and
// trailing data, and turns decoder errors into clear 400s.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return podium.Errorf(podium.ECodeInvalidJSON, "the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return podium.Errorf(podium.ECodeInvalidJSON, "the body holds more than one JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return podium.Errorf(podium.ECodeInvalidJSON, "the body has data after the JSON value")
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return podium.Errorf(podium.ECodeInvalidJSON, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return podium.Errorf(podium.ECodeInvalidJSON, "the JSON body ends too early")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return podium.Errorf(podium.ECodeInvalid, "the body must be a JSON object")
		}
		if typ.Type.Kind().String() == "int64" {
			return podium.Errorf(podium.ECodeInvalid, "field %s must be an integer in the int64 range (got %s)", field, typ.Value)
		}
		return podium.Errorf(podium.ECodeInvalid, "field %s has the wrong type (got %s, want %s)", field, typ.Value, typeName(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return podium.Errorf(podium.ECodeInvalid, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return podium.Errorf(podium.ECodeInvalidJSON, "invalid JSON: %v", err)
}

func typeName(kind string) string {
	switch kind {
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "int", "int64", "uint64", "int32", "float64":
		return "number"
	}
	return kind
}
