package main

import (
	"fmt"
	"log/slog"
)

// filesReserve is what a server holds open besides its client
// connections: the store's files (the database, its WAL and shared
// memory, one set per pooled connection), the listeners, webhooks'
// outgoing connections, the debug listener. A guess with room to spare.
const filesReserve = 256

// logOpenFiles states the open-file limit the server runs under (Go's
// runtime has already raised the soft limit to the hard one at start),
// and warns when --stream-max streams cannot all be open at once under
// it. Past the limit, accept fails with EMFILE: net/http retries it with
// a back-off of up to a second while new clients wait in the kernel's
// backlog, and the store may fail to open a file (503). Raise the hard
// limit (systemd LimitNOFILE=, docker --ulimit nofile=, ulimit -Hn as
// root) or lower --stream-max.
// With --h2c the warning says that it counts streams over HTTP/1.1, a
// connection each: streams over h2c share one (up to 256 a connection),
// so a server whose clients multiplex holds more.
func logOpenFiles(log *slog.Logger, streamMax int, h2c bool) {
	limit, err := openFilesLimit()
	if err != nil {
		log.Warn("open files limit unknown", "err", err)
		return
	}
	if msg := openFilesAdvice(limit, streamMax, h2c); msg != "" {
		log.Warn(msg, "nofile", limit, "stream_max", streamMax)
		return
	}
	log.Info("open files limit", "nofile", limit)
}

// openFilesAdvice is the warning for running --stream-max streams under
// an open-file limit of limit ("" when they fit, with filesReserve for
// everything else). A limit of 0 means unknown or unlimited.
func openFilesAdvice(limit uint64, streamMax int, h2c bool) string {
	if limit == 0 || streamMax <= 0 || uint64(streamMax)+filesReserve <= limit {
		return ""
	}
	fit := 0
	if limit > filesReserve {
		fit = int(limit - filesReserve)
	}
	msg := fmt.Sprintf("--stream-max %d is more than the open file limit allows (%d files: about %d streams with the store's files and the API's own connections); past it new connections wait in the backlog for accept to succeed: raise the hard limit (LimitNOFILE=, --ulimit nofile=) or lower --stream-max", streamMax, limit, fit)
	if h2c {
		msg += "; this counts streams over HTTP/1.1, a connection each: streams over h2c (--h2c) share a connection, up to 256 each, and fit"
	}
	return msg
}
