package client

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// One connection of a watch: the Server-Sent Events request, resumed with
// Last-Event-ID, and the reading of its events, each handed to the
// watcher (watch_state.go).

// maxEvent bounds one SSE event (a snapshot of 1,000 entries with 4 KiB of
// meta each is about 4 MiB).
const maxEvent = 32 << 20

// connect runs one connection until it ends, and says why.
func (w *watcher) connect(ctx context.Context) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, w.url, nil)
	if err != nil {
		return &Error{Code: "invalid_argument", Message: err.Error()}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if w.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.c.token)
	}
	if w.c.ua != "" {
		req.Header.Set("User-Agent", w.c.ua)
	}
	if w.lastID != "" {
		req.Header.Set("Last-Event-ID", w.lastID)
	}
	// The idle timer cuts a connection that went silent: a half-open TCP
	// connection would otherwise wait forever.
	idle := time.AfterFunc(w.o.IdleTimeout, cancel)
	defer idle.Stop()
	resp, err := w.c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return answerError(resp, b)
	}
	if w.following {
		w.live() // resuming: the server sends only what was missed, maybe nothing
	} else {
		w.setStatus(Status{State: "connecting", Attempt: w.attempt})
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var typ string
	var data bytes.Buffer
	for {
		line, err := readLine(r)
		if err != nil {
			if cctx.Err() != nil && ctx.Err() == nil {
				return fmt.Errorf("podium: the stream was silent for %s", w.o.IdleTimeout)
			}
			return err
		}
		idle.Reset(w.o.IdleTimeout)
		switch {
		case len(line) == 0: // the end of an event
			if data.Len() > 0 {
				if err := w.event(typ, data.Bytes()); err != nil {
					return err
				}
			}
			typ = ""
			data.Reset()
		case line[0] == ':': // a comment (ping)
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				typ = string(value)
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				if data.Len()+len(value) > maxEvent {
					return fmt.Errorf("podium: a stream event is over %d bytes", maxEvent)
				}
				data.Write(value)
			}
			// id: the watcher resumes from the events it applied, not
			// from the last id seen; retry: it has its own backoff.
		}
	}
}

// readLine reads one line without its end (\n, \r\n), up to maxEvent.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(buf) > maxEvent {
				return nil, fmt.Errorf("podium: a stream line is over %d bytes", maxEvent)
			}
			line, err = r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the server never ends a stream by itself
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
	return line, nil
}
