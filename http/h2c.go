package http

import (
	"net/http"
	"time"
)

// HTTP/2 cleartext with prior knowledge (h2c, issue 22), opt-in: a client
// that multiplexes opens many requests and live streams over one
// connection, and the HTTP/2 server writes the frames of many streams in
// one write. Served on the same port as HTTP/1.1, after the same listener
// (conn.go): the per-address connection cap counts the connection, the
// framing guard gives up on the connection preface (framing.go), and each
// stream is a request through Handler like any other, so the body limit,
// strict parsing, the body and request deadlines (per stream: net/http's
// HTTP/2 ResponseWriter sets them on the stream) and the live streams'
// caps apply per stream; a stream's client address is its connection's.
// An answer that would close an HTTP/1 connection (a body left unread)
// resets only its stream on HTTP/2 (statusWriter.WriteHeader), so one
// bad request does not end the other streams of its connection.
//
// The HTTP/2 settings are bounds, chosen so that one connection holds no
// more than a few HTTP/1.1 connections' worth of a server's resources:
//   - h2cMaxStreams concurrent requests (streams) per connection, Go's
//     default rounded up to a power of two. Live streams count too, and
//     --stream-per-ip still caps them per address: a client that wants
//     more than 256 streams opens more connections, each under
//     --conns-per-ip. 128 connections of 256 streams are 32,768 requests
//     in flight from one address, against 128 over HTTP/1.1; the
//     per-address rate limits and stream caps are what bound them.
//   - h2cFrameSize, the largest frame a client may send: the protocol's
//     minimum (16 KiB) rather than Go's 1 MiB, so that a frame buffer per
//     connection stays small; bodies arrive in more frames.
//   - h2cRecvConn and h2cRecvStream, the request body bytes buffered
//     before the handler reads them (flow-control windows): 1 MiB per
//     connection and 256 KiB per stream (Go: 1 MiB each), since a body is
//     at most --max-body and read as it comes.
//   - h2cWriteTimeout: a connection whose writes make no progress this
//     long is closed, with all its streams; a single live stream that is
//     not read is cut by its own write deadline (the stall timeout, per
//     stream) while the connection's window lets others through.
const (
	h2cMaxStreams   = 256
	h2cFrameSize    = 16 << 10
	h2cRecvConn     = 1 << 20
	h2cRecvStream   = 256 << 10
	h2cWriteTimeout = 30 * time.Second
)

// ServeH2C makes hs, which serves Handler on Listener, also accept HTTP/2
// with prior knowledge on the same port, with the bounds above. Without
// it a connection that opens with the HTTP/2 preface is read as HTTP/1.1:
// its "PRI *" is answered 404 and the connection closed.
func ServeH2C(hs *http.Server) {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs.Protocols = &p
	hs.HTTP2 = &http.HTTP2Config{
		MaxConcurrentStreams:          h2cMaxStreams,
		MaxReadFrameSize:              h2cFrameSize,
		MaxReceiveBufferPerConnection: h2cRecvConn,
		MaxReceiveBufferPerStream:     h2cRecvStream,
		WriteByteTimeout:              h2cWriteTimeout,
	}
}
