package ratelimit

import (
	"fmt"
	"strings"
)

// Bucket is one family of bucket names: the scope it is counted under
// (the scope label of the metrics and the RateLimit-Policy name) and the
// pattern of its names, in which each {placeholder} stands for one or more
// characters filled in by Name.
//
// The families below are the one definition of what podium writes: the
// HTTP server and the evidence budgets build every bucket name with Name,
// and the shared stores document their keys from Buckets (redis.Keyspace,
// which podium check --redis compares the keys it finds with).
type Bucket struct {
	Scope   string
	Pattern string
}

// The bucket families podium charges.
var (
	// AuthFail counts the failed authentications of a client address.
	AuthFail = Bucket{"auth", "auth:ip:{address}"}
	// Anon counts the anonymous requests of a client address.
	Anon = Bucket{"anon", "anon:ip:{address}"}
	// Submit counts a principal's score submissions to one board ("*" for
	// a batch over boards); kind is "key" or "player".
	Submit = Bucket{"submit", "submit:{kind}:{principal}:{board}"}
	// Request counts a principal's other requests.
	Request = Bucket{"request", "request:{kind}:{principal}"}
	// EvidencePlayer counts the evidence bytes (KiB) a player uploads.
	EvidencePlayer = Bucket{"evidence", "evidence:player:{player}"}
	// EvidenceGlobal counts the evidence bytes (KiB) of every player.
	EvidenceGlobal = Bucket{"evidence", "evidence:global"}
)

// Buckets lists every bucket family, for the stores' documentation of
// their keys.
func Buckets() []Bucket {
	return []Bucket{AuthFail, Anon, Submit, Request, EvidencePlayer, EvidenceGlobal}
}

// Name is the name of the bucket of the family with the given values of
// its placeholders, in order. An empty value becomes "-" so that every
// name matches its pattern. It panics if the number of values is not the
// number of placeholders, which is a mistake in the caller.
func (b Bucket) Name(values ...string) string {
	var s strings.Builder
	s.Grow(len(b.Pattern) + 32)
	rest, n := b.Pattern, 0
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 || n == len(values) {
			n = -1
			break
		}
		s.WriteString(rest[:open])
		v := values[n]
		if v == "" {
			v = "-"
		}
		s.WriteString(v)
		n++
		rest = rest[open+end+1:]
	}
	if n != len(values) {
		panic(fmt.Sprintf("ratelimit: bucket %q is not filled by %d values", b.Pattern, len(values)))
	}
	s.WriteString(rest)
	return s.String()
}
