package main

import (
	"io"
	"log/slog"
)

// newLogger is serve's logger: logfmt-like text for people (the default),
// or one JSON object per line (--log-format json) for log collectors.
// Either way the level is --log-level.
func newLogger(w io.Writer, c Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(c.LogLevel)}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
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
