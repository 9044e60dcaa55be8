package redis

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Admin inspects and cleans one deployment's keys for the operations
// commands (podium check --redis, podium rebuild --redis). It is never
// used on a request path: it walks the keys with SCAN, which visits the
// whole keyspace of the Redis database.
type Admin struct {
	rdb *goredis.Client
	ks  Keyspace
}

// OpenAdmin connects to the Redis at url for the deployment env (see
// NewKeyspace). It does not wait for Redis; Ping does.
func OpenAdmin(url, env string) (*Admin, error) {
	ks, err := NewKeyspace(env)
	if err != nil {
		return nil, err
	}
	o, err := parseURL(url, 2*time.Second, 5*time.Second)
	if err != nil {
		return nil, err
	}
	o.DialerRetries = 1 // a Redis that is down is reported at once
	o.PoolSize = 2
	o.ContextTimeoutEnabled = true
	return &Admin{rdb: goredis.NewClient(o), ks: ks}, nil
}

// Keyspace is the keyspace of the deployment.
func (a *Admin) Keyspace() Keyspace { return a.ks }

// Ping checks that Redis answers.
func (a *Admin) Ping(ctx context.Context) error {
	if err := a.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: ping: %w", err)
	}
	return nil
}

// ScanCount is the COUNT hint of each SCAN call: how many slots Redis
// looks at per call.
const ScanCount = 1000

// Scan lists the keys of the deployment, every keyspace version
// (podium:{env}:*), with SCAN MATCH and COUNT ScanCount, sorted. It stops
// once it has found max keys: complete is false then, and more may exist.
func (a *Admin) Scan(ctx context.Context, max int) (keys []string, complete bool, err error) {
	seen := map[string]bool{} // SCAN may return a key more than once
	var cursor uint64
	for {
		var batch []string
		batch, cursor, err = a.rdb.Scan(ctx, cursor, a.ks.Deployment()+"*", ScanCount).Result()
		if err != nil {
			return nil, false, fmt.Errorf("redis: scan: %w", err)
		}
		for _, k := range batch {
			if !seen[k] {
				if len(seen) == max {
					return sortedKeys(seen), false, nil
				}
				seen[k] = true
			}
		}
		if cursor == 0 {
			return sortedKeys(seen), true, nil
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Type returns the Redis type of a key ("none" if it does not exist).
func (a *Admin) Type(ctx context.Context, key string) (string, error) {
	t, err := a.rdb.Type(ctx, key).Result()
	if err != nil {
		return "", fmt.Errorf("redis: type %s: %w", key, err)
	}
	return t, nil
}

// Delete removes keys with UNLINK (the memory is freed in the
// background), 500 per call, and returns how many existed.
func (a *Admin) Delete(ctx context.Context, keys []string) (int, error) {
	n := 0
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), 500)]
		keys = keys[len(chunk):]
		d, err := a.rdb.Unlink(ctx, chunk...).Result()
		if err != nil {
			return n, fmt.Errorf("redis: unlink: %w", err)
		}
		n += int(d)
	}
	return n, nil
}

// Close releases the connections.
func (a *Admin) Close() error { return a.rdb.Close() }

// Deployment is the prefix of every key of the deployment, whatever the
// keyspace version: podium:{env}:.
func (k Keyspace) Deployment() string {
	return strings.TrimSuffix(k.prefix, Version+":")
}

// KeyStatus says what a key under a deployment's prefix is to this
// version of podium.
type KeyStatus int

// Statuses of a key found under podium:{env}:.
const (
	// Documented: a data key of this keyspace version (Keys).
	Documented KeyStatus = iota
	// Undocumented: under this version's prefix (or under no version) but
	// not a key this version defines: left by a bug or by hand.
	Undocumented
	// Older: a key of an earlier keyspace version, which this podium never
	// reads (left by an older podium).
	Older
	// Newer: a key of a later keyspace version, which a newer podium
	// sharing this deployment may be using.
	Newer
)

func (s KeyStatus) String() string {
	switch s {
	case Documented:
		return "documented"
	case Undocumented:
		return "not in the keyspace"
	case Older:
		return "older keyspace version"
	case Newer:
		return "newer keyspace version"
	}
	return "unknown"
}

var versionRe = regexp.MustCompile(`^v([0-9]{1,9}):`)

// Classify says what key, which must be under Deployment(), is to this
// version. A data key is documented when it matches the Name of one of
// Keys that is not a pub/sub channel (channels hold no data and are never
// keys); a {placeholder} in a Name matches one or more characters.
func (k Keyspace) Classify(key string) KeyStatus {
	rest := strings.TrimPrefix(key, k.Deployment())
	m := versionRe.FindStringSubmatch(rest)
	if m == nil {
		return Undocumented
	}
	v, _ := strconv.Atoi(m[1])
	cur, _ := strconv.Atoi(strings.TrimPrefix(Version, "v"))
	switch {
	case v < cur:
		return Older
	case v > cur:
		return Newer
	}
	for _, d := range k.Keys() {
		if d.Type == channelType {
			continue
		}
		if namePattern(d.Name).MatchString(key) {
			return Documented
		}
	}
	return Undocumented
}

// channelType is the KeyDoc.Type of a publish/subscribe channel.
const channelType = "pub/sub channel"

var placeholderRe = regexp.MustCompile(`\{[^}]*\}`)

// namePattern turns a documented key name into a regular expression in
// which each {placeholder} matches one or more characters.
func namePattern(name string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range placeholderRe.FindAllStringIndex(name, -1) {
		b.WriteString(regexp.QuoteMeta(name[last:loc[0]]))
		b.WriteString(".+")
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(name[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
