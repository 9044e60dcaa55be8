package podium

import "context"

// Broker carries notices between the nodes that share a database: "board B
// advanced to seq N" after a commit, and "the metadata change feed moved"
// after a board, player or key changed. A notice only wakes the other
// nodes early: they read what changed from the database (the log by seq,
// the change feed by id), and they also poll it, so a notice that is lost,
// duplicated or late never loses or doubles anything; it only delays.
//
// Implementations: postgres (LISTEN/NOTIFY) and redis (publish/subscribe).
type Broker interface {
	// Publish sends a notice to every node, this one included, on a best
	// effort basis. It does not wait for delivery.
	Publish(ctx context.Context, n Notice) error
	// Subscribe calls fn for every notice received until ctx ends,
	// reconnecting after failures; lost calls while disconnected are the
	// reason nodes also poll. fn must not block.
	Subscribe(ctx context.Context, fn func(Notice)) error
	// Err reports why the broker cannot deliver now (nil when connected),
	// for /readyz and the logs.
	Err() error
	// Close releases the broker.
	Close() error
}

// Notice is one message between nodes. It carries domain names only (board
// ids, seqs, change ids), never process-local numbers.
type Notice struct {
	Node   string `json:"n,omitempty"` // the publishing node, so it can skip its own
	Board  string `json:"b,omitempty"` // a board advanced...
	Seq    uint64 `json:"s,omitempty"` // ...to this seq
	Change int64  `json:"c,omitempty"` // the change feed reached this id
}
