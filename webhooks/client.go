package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Delivery limits.
const (
	// DefaultTimeout bounds one attempt, from dial to the response's
	// last byte read.
	DefaultTimeout = 10 * time.Second
	// MaxResponse is how much of a receiver's response is read (and
	// kept, cut, as the delivery's error); the rest is not read.
	MaxResponse = 4 << 10
	userAgent   = "podium-webhooks/1"
)

// Client sends deliveries: POSTs of a JSON body, signed, to a URL that
// passes its Guard at dial time, within Timeout, never following a
// redirect (a 3xx is a failed attempt) nor a proxy from the environment
// (which would dial for it, past the guard).
type Client struct {
	hc *http.Client
}

// NewClient returns a client that dials through guard; timeout 0 means
// DefaultTimeout.
func NewClient(guard Guard, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	d := guard.dialer(net.Dialer{Timeout: min(timeout, 5*time.Second)})
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    min(timeout, 5*time.Second),
		ResponseHeaderTimeout:  timeout,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
		ForceAttemptHTTP2:      true,
	}
	return &Client{hc: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Message is one delivery's content.
type Message struct {
	ID   string // the event's id (webhook-id)
	Body []byte // the JSON body
}

// Result is how one attempt went.
type Result struct {
	Status  int           // the HTTP status, 0 if none came
	Latency time.Duration // from sending to the end of the response read
	Err     error         // nil: delivered (a 2xx)
}

// Send makes one attempt to deliver m to url, signed with each of keys
// (two while a secret is rotated) at time at.
func (c *Client) Send(ctx context.Context, url string, keys [][]byte, m Message, at time.Time) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(m.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("request: %w", err)}
	}
	ts := at.Unix()
	var sig []byte
	for i, k := range keys {
		if i > 0 {
			sig = append(sig, ' ')
		}
		sig = append(sig, Sign(k, m.ID, ts, m.Body)...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderID, m.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, string(sig))
	t0 := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return Result{Latency: time.Since(t0), Err: cleanErr(err)}
	}
	defer resp.Body.Close()
	head, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	r := Result{Status: resp.StatusCode, Latency: time.Since(t0)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		// Delivered, even if reading the rest of the body failed.
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		r.Err = fmt.Errorf("status %d: redirects are not followed", resp.StatusCode)
	default:
		msg := string(bytes.ToValidUTF8(bytes.TrimSpace(head), nil))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		r.Err = fmt.Errorf("status %d: %s", resp.StatusCode, msg)
		if rerr != nil {
			r.Err = fmt.Errorf("status %d: read the response: %w", resp.StatusCode, rerr)
		}
	}
	return r
}

// cleanErr drops the URL net/http puts in its errors (it is the
// endpoint's, already known, and may carry a token in its query).
func cleanErr(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if ue.Timeout() {
		return fmt.Errorf("timeout: %w", ue.Err)
	}
	return ue.Err
}
