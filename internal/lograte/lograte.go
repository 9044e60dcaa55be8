// Package lograte keeps a failure that repeats from flooding the log: a
// slog.Handler that lets a warning or an error with a given message
// through once per interval, and counts the repeats it drops, which the
// next one let through reports.
//
// A full disk once made podium write one ERROR line per failed request,
// 11 MB of log in 75 s (issue 17 item 11), on the volume that was full.
package lograte

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// SuppressedKey is the attribute of a record let through after repeats
// were dropped: how many records with its level and message were dropped
// since the last one let through.
const SuppressedKey = "suppressed"

// maxKeys bounds the messages tracked at once. podium's messages are
// constant (the details are attributes), so few are ever tracked; past
// the bound a message that is not tracked goes through.
const maxKeys = 4096

// Handler is a slog.Handler that passes records below Min through and
// lets through a record at Min or above only if no record with the same
// level and message was let through within the interval; see New.
type Handler struct {
	next  slog.Handler
	state *state
}

type state struct {
	every time.Duration
	min   slog.Level
	now   func() time.Time

	mu   sync.Mutex
	seen map[key]*window
}

type key struct {
	level slog.Level
	msg   string
}

// window is a message's current interval: when it began (with the record
// let through) and how many repeats were dropped since.
type window struct {
	start   time.Time
	dropped int
}

// New returns a handler over next that lets a record of level min or above
// through once per every for each level and message; every <= 0 lets all
// through. now is the clock (default time.Now).
func New(next slog.Handler, every time.Duration, min slog.Level, now func() time.Time) *Handler {
	if now == nil {
		now = time.Now
	}
	return &Handler{next: next, state: &state{every: every, min: min, now: now, seen: map[key]*window{}}}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	st := h.state
	if st.every <= 0 || r.Level < st.min {
		return h.next.Handle(ctx, r)
	}
	pass, dropped := st.admit(key{r.Level, r.Message})
	if !pass {
		return nil
	}
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int(SuppressedKey, dropped))
	}
	return h.next.Handle(ctx, r)
}

// admit says whether a record with k goes through now, and if so how many
// were dropped since the last one that did.
func (st *state) admit(k key) (pass bool, dropped int) {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	w := st.seen[k]
	if w != nil && now.Sub(w.start) < st.every {
		w.dropped++
		return false, 0
	}
	if w == nil {
		if len(st.seen) >= maxKeys {
			st.sweep(now)
			if len(st.seen) >= maxKeys {
				return true, 0
			}
		}
		w = &window{}
		st.seen[k] = w
	}
	dropped, w.start, w.dropped = w.dropped, now, 0
	return true, dropped
}

// sweep forgets the messages whose interval ended with nothing dropped
// (a repeat after it would go through anyway, with nothing to report).
func (st *state) sweep(now time.Time) {
	for k, w := range st.seen {
		if w.dropped == 0 && now.Sub(w.start) >= st.every {
			delete(st.seen, k)
		}
	}
}

// WithAttrs implements slog.Handler; the new handler shares the
// intervals.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(as), state: h.state}
}

// WithGroup implements slog.Handler; the new handler shares the
// intervals.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), state: h.state}
}
