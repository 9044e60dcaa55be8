// Package client is a Go client for podium's HTTP API (docs/API.md): typed,
// context-aware methods for every endpoint, retries that are safe (a write
// carries an Idempotency-Key that its retries reuse), and Watch, which
// follows a board's live top N over Server-Sent Events.
//
// It depends on the standard library only, and on no other podium package:
// its types mirror the wire format of docs/API.md, which is the contract,
// rather than the server's domain types, so a game server that imports it
// compiles nothing of the server.
//
//	c := client.New("https://podium.example", client.WithKey(os.Getenv("PODIUM_KEY")))
//	res, err := c.Submit(ctx, "ms:expert", client.Score{Player: "alice", Keys: []int64{41234, 150}})
//	if client.IsNotFound(err) { ... }
//
// Adding an endpoint is one method over call (see boards.go): the method
// names the request's kind (read, idempotent, keyed or once), which decides
// how it is retried (retry.go).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is sent in the default User-Agent.
const Version = "0.1.0"

// maxAnswer bounds the body of an answer the client reads (a page of 1,000
// entries with 4 KiB of meta each is about 4 MiB).
const maxAnswer = 64 << 20

// Client talks to one podium server. It is safe for concurrent use.
type Client struct {
	base  string // scheme://host[/prefix], no trailing slash
	token string
	hc    *http.Client
	ua    string
	retry RetryPolicy
}

// Option configures a Client.
type Option func(*Client)

// WithKey authenticates every request with an API key or a player session
// token (pds_...), sent as "Authorization: Bearer".
func WithKey(key string) Option { return func(c *Client) { c.token = key } }

// WithHTTPClient makes the client send its requests with hc (default: a
// client without a timeout; bound calls with their context).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header (default "podium-go/<Version>").
func WithUserAgent(ua string) Option { return func(c *Client) { c.ua = ua } }

// WithRetry sets the retry policy (default DefaultRetry; NoRetry disables
// retries).
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// New returns a client of the server at baseURL ("https://podium.example",
// a path prefix is kept).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), hc: &http.Client{}, ua: "podium-go/" + Version, retry: DefaultRetry}
	for _, o := range opts {
		o(c)
	}
	c.retry = c.retry.withDefaults()
	return c
}

// WithKey returns a copy of c that authenticates with key instead (a
// session token it was just issued, say); the copy shares the transport.
func (c *Client) WithKey(key string) *Client {
	d := *c
	d.token = key
	return &d
}

// Error is an error answer of the server, {"error": {"code", "message"}},
// with its HTTP status and Retry-After (zero when absent).
type Error struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("podium: %d %s: %s", e.Status, e.Code, e.Message)
}

// Is makes errors.Is(err, ErrNotFound) and the like true for an *Error of
// that kind: a sentinel matches by code, or by status when it has no code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.Code != "" {
		if t.Code == "*not_found" {
			return e.Status == http.StatusNotFound
		}
		return t.Code == e.Code
	}
	return t.Status == e.Status
}

// Sentinels for errors.Is. ErrNotFound matches every 404 (board_not_found,
// entry_not_found, not_found).
var (
	ErrNotFound        = &Error{Code: "*not_found"}
	ErrBoardNotFound   = &Error{Code: "board_not_found"}
	ErrEntryNotFound   = &Error{Code: "entry_not_found"}
	ErrUnauthenticated = &Error{Code: "unauthenticated"}
	ErrForbidden       = &Error{Code: "forbidden"}
	ErrInvalid         = &Error{Code: "invalid_argument"}
	ErrConflict        = &Error{Code: "conflict"}
	ErrRateLimited     = &Error{Code: "rate_limited"}
	ErrUnavailable     = &Error{Code: "unavailable"}
	ErrOutcomeUnknown  = &Error{Code: "outcome_unknown"}
	ErrUnprocessable   = &Error{Code: "unprocessable"}  // e.g. a value outside its key's bounds
	ErrQuotaExceeded   = &Error{Code: "quota_exceeded"} // the board's quota for the period is used up
)

// IsNotFound reports whether err is a 404 answer of any code.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is a 409 answer of any code (conflict,
// tournament_closed, tournament_full, points_board).
func IsConflict(err error) bool { return StatusOf(err) == http.StatusConflict }

// IsRateLimited reports whether err is a 429 answer.
func IsRateLimited(err error) bool { return StatusOf(err) == http.StatusTooManyRequests }

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// CodeOf returns the error code of an *Error in err's chain, or "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// request is one API call before it is sent.
type request struct {
	method string
	path   string // already escaped
	query  url.Values
	body   any // nil: none
	kind   kind
	idem   string // Idempotency-Key; generated for keyed requests when empty
	// raw is a body sent as it is, with rawType as its Content-Type,
	// instead of body's JSON (evidence uploads).
	raw     []byte
	rawType string
}

// Meta is what an answer's headers said beyond its body.
type Meta struct {
	Status         int
	Replayed       bool   // Idempotent-Replayed: true
	Reconstructed  bool   // Idempotent-Reconstructed: true
	IdempotencyKey string // the key the request carried, if any
	Attempts       int    // requests sent, retries included
}

// call sends req (with retries) and decodes the answer into out (nil: the
// body is discarded).
func (c *Client) call(ctx context.Context, req request, out any) (Meta, error) {
	body := req.raw
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			return Meta{}, fmt.Errorf("podium: encode %s %s: %w", req.method, req.path, err)
		}
	}
	if req.kind == keyed && req.idem == "" {
		req.idem = NewIdempotencyKey()
	}
	u := c.base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	meta := Meta{IdempotencyKey: req.idem}
	for attempt := 0; ; attempt++ {
		meta.Attempts = attempt + 1
		b, resp, err := c.send(ctx, req, u, body)
		if err == nil {
			meta.Status = resp.StatusCode
			meta.Replayed = resp.Header.Get("Idempotent-Replayed") == "true"
			meta.Reconstructed = resp.Header.Get("Idempotent-Reconstructed") == "true"
			if resp.StatusCode >= 300 {
				err = answerError(resp, b)
			} else if raw, ok := out.(*[]byte); ok {
				*raw = b
				return meta, nil
			} else if out != nil && len(b) > 0 {
				if jerr := json.Unmarshal(b, out); jerr != nil {
					return meta, fmt.Errorf("podium: decode the answer of %s %s: %w", req.method, req.path, jerr)
				}
				return meta, nil
			} else {
				return meta, nil
			}
		}
		wait, ok := c.retry.next(ctx, req.kind, attempt, err)
		if !ok {
			return meta, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return meta, err
		case <-t.C:
		}
	}
}

// send makes one attempt and reads the whole answer.
func (c *Client) send(ctx context.Context, req request, u string, body []byte) ([]byte, *http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, rd)
	if err != nil {
		return nil, nil, &permanent{err}
	}
	if req.raw != nil {
		hr.Header.Set("Content-Type", req.rawType)
	} else if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Accept", "application/json")
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.ua != "" {
		hr.Header.Set("User-Agent", c.ua)
	}
	if req.idem != "" {
		hr.Header.Set("Idempotency-Key", req.idem)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, nil, fmt.Errorf("podium: read the answer of %s %s: %w", req.method, req.path, err)
	}
	if len(b) > maxAnswer {
		return nil, nil, &permanent{fmt.Errorf("podium: the answer of %s %s is over %d bytes", req.method, req.path, maxAnswer)}
	}
	return b, resp, nil
}

// answerError turns an error answer into an *Error; a body that is not the
// error envelope (a proxy's page) keeps the status with code "http_<status>".
func answerError(resp *http.Response, b []byte) *Error {
	e := &Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message = env.Error.Code, env.Error.Message
	} else {
		e.Code = "http_" + strconv.Itoa(resp.StatusCode)
		e.Message = strings.TrimSpace(string(b[:min(len(b), 200)]))
	}
	return e
}

// retryAfter parses Retry-After: whole seconds, or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// permanent marks a failure that no retry can mend (a malformed URL, an
// answer too large).
type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }
func (p *permanent) Unwrap() error { return p.err }

// seg escapes one path segment (board, player and contest ids contain ':').
func seg(s string) string { return url.PathEscape(s) }

// path joins escaped segments under /v1.
func path(segs ...string) string {
	var b strings.Builder
	b.WriteString("/v1")
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(seg(s))
	}
	return b.String()
}

// BaseURL returns the server's base URL the client was made with.
func (c *Client) BaseURL() string { return c.base }

// Do sends a request to an endpoint that has no method yet (one added to
// the server after this client): path is under the base URL ("/v1/..."),
// already escaped (see url.PathEscape); body, if not nil, is sent as JSON;
// the answer is decoded into out unless it is nil. GET is retried as a
// read, PUT and DELETE as idempotent writes, and POST only when the server
// says nothing was applied, unless idempotencyKey is set: then the POST
// carries it on every attempt and is retried as a submission is.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any, idempotencyKey string) error {
	k := once
	switch {
	case method == http.MethodGet || method == http.MethodHead:
		k = read
	case method == http.MethodPut || method == http.MethodDelete:
		k = idempotent
	case idempotencyKey != "":
		k = keyed
	}
	_, err := c.call(ctx, request{method: method, path: path, query: query, body: body, kind: k, idem: idempotencyKey}, out)
	return err
}
