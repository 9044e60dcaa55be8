package main

import (
	"io"
	"log/slog"

	"github.com/podiumhq/podium/internal/lograte"
)

// newLogger is serve's logger: logfmt-like text for people (the default),
// or one JSON object per line (--log-format json) for log collectors.
// Either way the level is --log-level.
// Warnings and errors with one message are let through once per
// --log-repeat-every (internal/lograte), so that a failure repeated by
// every request does not flood the log (nor the disk that may be full).
func newLogger(w io.Writer, c Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(c.LogLevel)}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(lograte.New(h, c.LogRepeatEvery, slog.LevelWarn, nil))
}

// checkLogFormat refuses a --log-format other than text or json ("" is
// the default, text).
func checkLogFormat(f string) error {
	switch f {
	case "", "text", "json":
		return nil
	}
	return usagef("serve", "--log-format: %q is not text or json", f)
}

// plainOutput says whether serve may print its banners (the generated
// admin key, the demo's address) as plain lines among the logs: not when
// they are JSON, whose readers expect one object a line and would ship a
// secret to wherever logs go.
func (c *Config) plainOutput() bool { return c.LogFormat != "json" }
