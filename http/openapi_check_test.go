package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/podiumhq/podium/openapi"
)

// This file holds specChecker, an http.RoundTripper that validates every
// request and answer that goes through it against openapi/openapi.yaml
// with kin-openapi's openapi3filter, and the events of Server-Sent Events
// streams and WebSocket messages against the schemas the spec names for
// them (x-sse-data, x-websocket). Tests route their client through it;
// a mismatch fails the test, naming the exchange and what kin-openapi
// found.

func init() {
	// A stream's body is text; its events are checked one by one
	// (checkSSE), as kin-openapi has no notion of them in OpenAPI 3.1.
	openapi3filter.RegisterBodyDecoder("text/event-stream", func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(body)
		return string(b), err
	})
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	for _, ct := range []string{"text/javascript", "text/css", "image/svg+xml", "application/jsonl"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	for _, ct := range []string{"application/gzip", "application/x-gzip"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
	}
}

// loadSpec loads and validates the spec as the server serves it (the JSON
// converted from openapi.yaml), once.
func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := specDoc()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

var specDoc = sync.OnceValues(func() (*openapi3.T, error) {
	b, _, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml does not load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
})

// checkedClient is the client of the test servers' do: with
// PODIUM_OPENAPI_CHECK=1, every test of the package has its exchanges
// checked against the spec (TestOpenAPIScenario always does).
func checkedClient(t *testing.T) *http.Client {
	if os.Getenv("PODIUM_OPENAPI_CHECK") == "" {
		return &http.Client{Transport: expectContinueTransport()}
	}
	return newSpecChecker(t).client()
}

// specPath returns the spec's path template for a route pattern of the
// server's mux: "GET /{$}" is "/", a subtree "GET /assets/" is
// "/assets/{asset}".
func specPath(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	switch {
	case path == "/{$}":
		path = "/"
	case strings.HasSuffix(path, "/"):
		path += "{asset}"
	}
	return method, path
}

// anyOperation are the statuses of components/responses/Failure, which
// every operation's default stands for.
var anyOperation = map[int]bool{408: true, 500: true, 503: true}

type specChecker struct {
	t    *testing.T
	doc  *openapi3.T
	base http.RoundTripper
	dump bool // OPENAPI_DUMP=1 prints every exchange

	mu   sync.Mutex
	seen map[string]int // "GET /v1/boards/{board} 200": exchanges checked
}

func newSpecChecker(t *testing.T) *specChecker {
	return &specChecker{t: t, doc: loadSpec(t), base: expectContinueTransport(), seen: map[string]int{},
		dump: os.Getenv("OPENAPI_DUMP") != ""}
}

// client is an HTTP client whose exchanges are checked.
// expectContinueTransport is the default transport, but a request sent with
// Expect: 100-continue waits up to 30 s (not 1 s) for the server's interim
// or final answer before it sends its body: a request the server refuses
// on its headers then never races the refusal with its body.
func expectContinueTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ExpectContinueTimeout = 30 * time.Second
	return t
}

func (c *specChecker) client() *http.Client { return &http.Client{Transport: c} }

// route finds the spec's operation for a request: the path template whose
// segments match, literal segments winning over parameters.
func (c *specChecker) route(req *http.Request) (*routers.Route, map[string]string, error) {
	segs := strings.Split(req.URL.EscapedPath(), "/")
	var (
		best      *routers.Route
		bestScore = -1
		params    map[string]string
	)
	for path, item := range c.doc.Paths.Map() {
		tsegs := strings.Split(path, "/")
		if len(tsegs) != len(segs) {
			continue
		}
		score, ps, ok := 0, map[string]string{}, true
		for i, ts := range tsegs {
			if strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}") && segs[i] != "" {
				v, err := url.PathUnescape(segs[i])
				if err != nil {
					ok = false
					break
				}
				ps[ts[1:len(ts)-1]] = v
				continue
			}
			if ts != segs[i] {
				ok = false
				break
			}
			score++
		}
		if !ok || score <= bestScore {
			continue
		}
		op := item.GetOperation(req.Method)
		if op == nil && req.Method == http.MethodHead {
			op = item.Get
		}
		if op == nil {
			continue
		}
		best, bestScore, params = &routers.Route{Spec: c.doc, Path: path, PathItem: item, Method: req.Method, Operation: op}, score, ps
	}
	if best == nil {
		return nil, nil, fmt.Errorf("no operation in openapi.yaml for %s %s", req.Method, req.URL.Path)
	}
	return best, params, nil
}

// RoundTrip sends the request and checks the exchange. An event stream is
// checked when its body is closed, over the events read by then.
func (c *specChecker) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	res, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case res.StatusCode == http.StatusSwitchingProtocols:
		c.check(req, reqBody, res, nil)
	case strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream"):
		res.Body = &sseTee{ReadCloser: res.Body, done: func(b []byte) { c.check(req, reqBody, res, b) }}
	default:
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		c.check(req, reqBody, res, body)
	}
	return res, nil
}

// sseTee keeps what was read of a stream and hands it to done on Close
// (which may come from another goroutine than the reads).
type sseTee struct {
	io.ReadCloser
	once sync.Once
	done func([]byte)

	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *sseTee) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.mu.Lock()
	s.buf.Write(p[:n])
	s.mu.Unlock()
	return n, err
}

func (s *sseTee) Close() error {
	err := s.ReadCloser.Close()
	s.once.Do(func() {
		s.mu.Lock()
		b := bytes.Clone(s.buf.Bytes())
		s.mu.Unlock()
		s.done(b)
	})
	return err
}

func (c *specChecker) check(req *http.Request, reqBody []byte, res *http.Response, body []byte) {
	c.t.Helper()
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.RequestURI(), res.StatusCode)
	if c.dump {
		c.t.Logf("%s\n  request: %s\n  answer: %s", what, reqBody, body)
	}
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
		c.checkPreflight(what, res, body)
		return
	}
	route, params, err := c.route(req)
	if err != nil {
		c.checkUnrouted(what, err, res, body)
		return
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true, MultiError: true,
		ExcludeResponseBody: res.StatusCode == http.StatusSwitchingProtocols}
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	if len(reqBody) > 0 && vreq.Header.Get("Content-Type") == "" {
		vreq.Header.Set("Content-Type", "application/json") // podium reads such a body as JSON
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	// A request the server accepted must be one the spec allows; refused
	// ones are often refused because they do not fit, on purpose. An
	// operation with x-item-errors accepts a body whose items do not fit
	// (each gets its own error), so only its parameters must.
	if res.StatusCode < 400 {
		if route.Operation.Extensions["x-item-errors"] == true {
			opts := *opts
			opts.ExcludeRequestBody = true
			in := *in
			in.Options = &opts
			if err := openapi3filter.ValidateRequest(ctx, &in); err != nil {
				c.t.Errorf("%s: the request does not match openapi.yaml (%s %s): %v", what, route.Method, route.Path, err)
			}
		} else if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			c.t.Errorf("%s: the request does not match openapi.yaml (%s %s): %v\nrequest body: %s",
				what, route.Method, route.Path, err, reqBody)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode,
		Header: res.Header, Body: io.NopCloser(bytes.NewReader(body)), Options: opts}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		c.t.Errorf("%s: the answer does not match openapi.yaml (%s %s): %v\nanswer: %.600s",
			what, route.Method, route.Path, err, body)
	}
	// default describes the failures any operation may meet; every other
	// status must be declared where it is answered.
	if route.Operation.Responses.Value(strconv.Itoa(res.StatusCode)) == nil && !anyOperation[res.StatusCode] {
		c.t.Errorf("%s: openapi.yaml does not declare status %d for %s %s", what, res.StatusCode, route.Method, route.Path)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		c.checkSSE(what, route, res.StatusCode, body)
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %s %d", route.Method, route.Path, res.StatusCode)]++
	c.mu.Unlock()
}

// eventSchema returns the components schema that an extension (x-sse-data,
// or a member of x-websocket) names with a $ref.
func (c *specChecker) eventSchema(ext any, what string) *openapi3.Schema {
	c.t.Helper()
	m, _ := ext.(map[string]any)
	ref, _ := m["$ref"].(string)
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	s := c.doc.Components.Schemas[name]
	if !ok || s == nil || s.Value == nil {
		c.t.Fatalf("%s: the spec names no components schema for its events (%v)", what, ext)
	}
	return s.Value
}

// checkSSE checks each complete event of a stream: its data against the
// schema of the operation's x-sse-data, and its event name against the
// data's type.
func (c *specChecker) checkSSE(what string, route *routers.Route, status int, body []byte) {
	c.t.Helper()
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil || resp.Value.Content["text/event-stream"] == nil {
		c.t.Errorf("%s: an event stream the spec does not describe", what)
		return
	}
	schema := c.eventSchema(resp.Value.Content["text/event-stream"].Extensions["x-sse-data"], what)
	text := string(body)
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		text = text[:i]
	} else {
		text = ""
	}
	for _, block := range strings.Split(text, "\n\n") {
		var name, data string
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data += line[len("data: "):]
			}
		}
		if data == "" {
			continue // retry:, : ping
		}
		c.checkEvent(what+" event "+name, schema, []byte(data), name)
	}
}

// checkEvent validates one event or WebSocket message against schema; a
// non-empty name must equal its type.
func (c *specChecker) checkEvent(what string, schema *openapi3.Schema, data []byte, name string) {
	c.t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		c.t.Errorf("%s: data is not JSON: %s", what, data)
		return
	}
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		c.t.Errorf("%s: does not match openapi.yaml: %v\ndata: %.600s", what, err, data)
	}
	if m, _ := v.(map[string]any); name != "" && m["type"] != name {
		c.t.Errorf("%s: event name %q, but data type %v", what, name, m["type"])
	}
	c.mu.Lock()
	c.seen["event "+name]++
	c.mu.Unlock()
}

// statuses returns the statuses checked, sorted.
func (c *specChecker) statuses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k := range c.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkUnrouted checks an answer to a request the spec has no operation
// for: only the server's own 404 (unknown path) and 405 (known path,
// another method, with Allow) may answer it, in the error shape, as the
// spec's description says.
func (c *specChecker) checkUnrouted(what string, err error, res *http.Response, body []byte) {
	c.t.Helper()
	if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
		c.t.Errorf("%s: %v", what, err)
		return
	}
	if res.StatusCode == http.StatusMethodNotAllowed && res.Header.Get("Allow") == "" {
		c.t.Errorf("%s: 405 without Allow", what)
	}
	c.checkEvent(what, c.doc.Components.Schemas["Error"].Value, body, "")
	c.mu.Lock()
	c.seen[fmt.Sprintf("unrouted - %d", res.StatusCode)]++
	c.mu.Unlock()
}

// checkPreflight checks a CORS preflight, which the server answers on
// every path before routing, as the spec's description says: 204, or 403
// in the error shape.
func (c *specChecker) checkPreflight(what string, res *http.Response, body []byte) {
	c.t.Helper()
	switch res.StatusCode {
	case http.StatusNoContent:
		if res.Header.Get("Access-Control-Allow-Methods") == "" {
			c.t.Errorf("%s: a preflight answer without Access-Control-Allow-Methods", what)
		}
	case http.StatusForbidden:
		c.checkEvent(what, c.doc.Components.Schemas["Error"].Value, body, "")
	default:
		c.t.Errorf("%s: a preflight answered %d, not 204 or 403", what, res.StatusCode)
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("preflight - %d", res.StatusCode)]++
	c.mu.Unlock()
}
