package http

import (
	"context"
	"log"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// API keys reach podium in the Authorization header and, for the WebSocket
// only, as ?key= (browsers cannot set headers on one). podium never logs a
// header or a whole URL; what it logs of a request goes through here so
// that no secret does either.

// secretParam reports whether a query parameter carries a secret.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "key") || strings.Contains(n, "token") || strings.Contains(n, "secret") || strings.Contains(n, "password")
}

// redactQuery returns a raw query string with the values of secret
// parameters replaced by REDACTED, for logs.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if u, err := url.QueryUnescape(name); err == nil {
			name = u
		}
		if hasValue && secretParam(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + "REDACTED"
		}
	}
	return strings.Join(parts, "&")
}

var (
	// A query parameter such as key=..., token=... in any URL in a line.
	secretInURL = regexp.MustCompile(`(?i)([?&;][^=&\s"'?]*(?:key|token|secret|password)[^=&\s"'?]*=)[^&\s"'#]*`)
	// Authorization: Bearer <key>, or Basic.
	secretInAuth = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[^\s"',;]+`)
	// podium's generated secrets, wherever they appear.
	podiumSecret = regexp.MustCompile(`pdm_[A-Za-z0-9_-]+`)
)

// redactText removes what looks like a secret from a log line.
func redactText(s string) string {
	s = secretInURL.ReplaceAllString(s, "${1}REDACTED")
	s = secretInAuth.ReplaceAllString(s, "${1}${2}REDACTED")
	return podiumSecret.ReplaceAllString(s, "pdm_REDACTED")
}

// ErrorLog returns a logger for http.Server.ErrorLog that writes to l at
// warning level with secrets removed: net/http logs there what it cannot
// hand to a handler (a panic's value, a bad response), which may quote a
// request.
func ErrorLog(l *slog.Logger) *log.Logger {
	return log.New(redactWriter{l}, "", 0)
}

type redactWriter struct{ l *slog.Logger }

func (w redactWriter) Write(p []byte) (int, error) {
	w.l.Log(context.Background(), slog.LevelWarn, redactText(strings.TrimSuffix(string(p), "\n")))
	return len(p), nil
}
