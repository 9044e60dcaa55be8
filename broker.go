package podium

import (
	"context"
	"encoding/json"
)

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
	// Contest, when set, names a CTF contest whose solves reached Seq
	// (package ctf); Board is then empty.
	Contest string `json:"ct,omitempty"`
	// Revoked, with Change, names the API keys and player sessions
	// (their ids) that the change deleted: a node refuses them as soon as
	// it receives the notice, before it reads the change feed, which does
	// the same. Ids are never reused, so a late or repeated notice is
	// harmless. At most MaxRevokedPerNotice; more are left to the feed.
	Revoked []string `json:"x,omitempty"`
	// Rows, when present, are the board's log rows up to Seq that the
	// commit wrote (consecutive seqs): a node that has applied the seq
	// just before them applies them without reading the database. A
	// broker may drop them (a payload too large for it); the log is
	// always there.
	Rows []Row `json:"r,omitempty"`
}

// MaxRevokedPerNotice bounds Notice.Revoked, so that a notice stays
// under NOTIFY's 8000 bytes.
const MaxRevokedPerNotice = 64

// Row is one logged submission in a Notice, its board implied.
type Row struct {
	Seq    uint64          `json:"q"`
	Period string          `json:"p"`
	Player string          `json:"u"`
	Kind   Kind            `json:"k,omitempty"`
	Keys   []int64         `json:"v,omitempty"`
	At     int64           `json:"t"` // unix ms, as logged
	Meta   json.RawMessage `json:"m,omitempty"`
}

// RowOf returns s as a Row, sharing nothing with s.
func RowOf(s *Submission) Row {
	r := Row{Seq: s.Seq, Period: s.Period, Player: s.Player, Kind: s.Kind, At: Millis(s.At),
		Keys: append([]int64(nil), s.Keys...)}
	if m := StoredMeta(s.Meta); m != nil {
		r.Meta = append(json.RawMessage(nil), m...)
	}
	return r
}

// Submission fills sub with the row of board (sub's slices are reused).
func (r *Row) Submission(board string, sub *Submission) {
	*sub = Submission{Seq: r.Seq, Board: board, Period: r.Period, Player: r.Player, Kind: r.Kind,
		Keys: append(sub.Keys[:0], r.Keys...), At: FromMillis(r.At), Meta: r.Meta}
}
