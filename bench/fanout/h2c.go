package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// The --h2c mode: the clients' streams share HTTP/2 cleartext connections
// (prior knowledge; the server needs --h2c), --h2c-streams of them on
// each. Every group of that many clients has its own net/http Transport,
// which holds one connection: a Transport opens another only when the
// server's stream limit is reached, and that limit (256) is above the
// group. The SSE body is parsed by the same client.read as in the
// HTTP/1.1 mode. Differences in what is measured:
//   - the wire bytes (cWire) of a connection are counted on its first
//     client: the report sums them over clients, which stays right;
//   - a stream that reads nothing for 60 s is cancelled by a timer
//     (idleCut) where the HTTP/1.1 mode sets a socket deadline.

// h2cGroup is the Transport of one group of clients.
type h2cGroup struct {
	tr *http.Transport
	hc *http.Client
}

// newH2CGroup returns a group whose connections come from dialer and
// count their bytes read in wire.
func newH2CGroup(f *fleet, dialer net.Dialer, wire *atomic.Int64) *h2cGroup {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p, MaxConnsPerHost: 1,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, f.addr)
			if err != nil {
				return nil, err
			}
			f.h2cConns.Add(1)
			return &countConn{Conn: c, n: wire}, nil
		}}
	return &h2cGroup{tr: tr, hc: &http.Client{Transport: tr}}
}

// countConn counts the bytes read from a connection.
type countConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// idleCut cancels a stream when its deadline passes; SetDeadline moves it.
type idleCut struct {
	t      *time.Timer
	cancel context.CancelFunc
}

func (d *idleCut) SetDeadline(t time.Time) error {
	if d.t == nil {
		d.t = time.AfterFunc(time.Until(t), d.cancel)
	} else {
		d.t.Reset(time.Until(t))
	}
	return nil
}

func (d *idleCut) stop() {
	if d.t != nil {
		d.t.Stop()
	}
}

// sessionH2C is session over the client's h2c group: one stream, read
// until it ends.
func (c *client) sessionH2C(ctx context.Context, resume string) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, "GET", "http://"+c.f.host+c.f.path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("User-Agent", "podium-fanout")
	if resume != "" {
		req.Header.Set("Last-Event-ID", resume)
	}
	idle := &idleCut{cancel: cancel}
	defer idle.stop()
	idle.SetDeadline(time.Now().Add(30 * time.Second))
	resp, err := c.h2c.hc.Do(req)
	if err != nil {
		c.ctr[cConnFails].Add(1)
		return fmt.Errorf("h2c request: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		c.ctr[cConnFails].Add(1)
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("GET %s: %s %s %s", c.f.path, resp.Proto, resp.Status, body)
	}
	body := bufio.NewReaderSize(countReader{resp.Body, &c.ctr[cSSE]}, 4096)
	return c.read(body, idle)
}
