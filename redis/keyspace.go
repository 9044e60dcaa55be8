// Package redis is podium's shared tier on Redis: the broker that wakes
// the other nodes after a commit (podium.Broker over publish/subscribe),
// and the one definition of every Redis key podium uses (Keyspace).
//
// Redis is optional and holds nothing that is not also in the database:
// it may fail, restart empty or be flushed at any time and nothing is lost.
// While it is down, nodes learn of each other's writes by polling the
// database instead, which only adds delay.
package redis

import (
	"fmt"
	"regexp"
	"time"

	"github.com/podiumhq/podium/ratelimit"
	goredis "github.com/redis/go-redis/v9"
)

// Version is the version of the keyspace. A change in the meaning or type
// of a key gets a new version, so that nodes of two versions never read
// each other's keys.
const Version = "v1"

// Keyspace is every Redis key podium uses, all under podium:{env}:v1:, so
// that several deployments (prod, staging) can share one Redis and a later
// keyspace version can run beside this one. Each method documents its key:
// the Redis type, who writes it, and its TTL.
type Keyspace struct {
	prefix string
}

var envRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// NewKeyspace returns the keyspace of a deployment. env names the
// deployment: 1 to 32 characters of [a-z0-9_-], starting with a letter or
// digit.
func NewKeyspace(env string) (Keyspace, error) {
	if !envRe.MatchString(env) {
		return Keyspace{}, fmt.Errorf("redis: env %q must be 1 to 32 characters of [a-z0-9_-]", env)
	}
	return Keyspace{prefix: "podium:" + env + ":" + Version + ":"}, nil
}

// Prefix is the common prefix of every key of the keyspace, for tools that
// list or delete them (with SCAN and a bounded COUNT, never KEYS).
func (k Keyspace) Prefix() string { return k.prefix }

// Notices is the publish/subscribe channel that carries podium.Notice
// messages between nodes ("board B advanced to seq N", "the change feed
// moved").
//   - type: pub/sub channel (holds no data; a message reaches the nodes
//     subscribed at that moment)
//   - written by: every node, after each commit and metadata change
//   - read by: every node (one subscription each)
//   - TTL: none needed
func (k Keyspace) Notices() string { return k.prefix + "notices" }

// RateLimit is the bucket of one rate limit (package ratelimit), holding
// its GCRA theoretical arrival time.
//   - type: string (an integer, unix microseconds)
//   - written by: every node, by one Lua script per request (ratelimit.go)
//   - read by: the same script only
//   - TTL: until the bucket is full again (the TAT), so that a bucket no
//     request touched for a window is gone; nothing lists these keys.
//
// bucket is the name of a bucket of one of ratelimit.Buckets, for example
// "submit:key:k_12:chess"; Keys documents one key per family.
func (k Keyspace) RateLimit(bucket string) string { return k.prefix + "ratelimit:" + bucket }

// Keys lists every key and channel of the keyspace with its
// documentation, for docs and for podium check. The rate limit keys come
// from ratelimit.Buckets, the definition the writers use, so that what is
// documented and what is written cannot drift apart.
func (k Keyspace) Keys() []KeyDoc {
	docs := []KeyDoc{
		{Name: k.Notices(), Type: channelType, Owner: "every node publishes after a commit or a metadata change; every node subscribes", TTL: "none (a channel holds no data)"},
	}
	for _, b := range ratelimit.Buckets() {
		docs = append(docs, KeyDoc{Name: k.RateLimit(b.Pattern), Type: "string",
			Owner: "every node, one Lua script per rate-limited request (scope " + b.Scope + ")",
			TTL:   "until the bucket is full again (at most the limit's window)"})
	}
	return docs
}

// KeyDoc documents one key of the keyspace.
type KeyDoc struct {
	Name, Type, Owner, TTL string
}

// parseURL reads a redis:// URL into client options with the given dial
// and command timeouts and no retries: podium's commands decide for
// themselves what a failure means (a rate limit take is charged when it
// runs, so sending it again after its reply was lost charges it twice).
// go-redis reads MaxRetries 0 as "the default, 3"; -1 turns retries off.
func parseURL(url string, dial, command time.Duration) (*goredis.Options, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dial, command, command
	o.MaxRetries = -1
	return o, nil
}
