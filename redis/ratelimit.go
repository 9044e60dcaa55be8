package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/podiumhq/podium/ratelimit"
)

// Limiter is a ratelimit.Store on Redis: one key per bucket (see
// Keyspace.RateLimit), decided and updated by one Lua script per request,
// which Redis runs atomically, so every node sharing the Redis shares
// every limit. It touches only the bucket's key: no KEYS or SCAN, and
// expired buckets vanish by their TTL.
type Limiter struct {
	rdb *goredis.Client
	ks  Keyspace
}

var (
	_ ratelimit.Store    = (*Limiter)(nil)
	_ ratelimit.Refunder = (*Limiter)(nil)
)

// OpenLimiter returns a limiter store on the Redis at url with the
// keyspace of env. It does not wait for Redis; a Take while Redis is down
// fails fast (the ratelimit.Limiter then decides in process). timeout
// bounds dialling and each command (default 200ms).
func OpenLimiter(url, env string, timeout time.Duration) (*Limiter, error) {
	if env == "" {
		env = "default"
	}
	if timeout <= 0 {
		timeout = 200 * time.Millisecond
	}
	ks, err := NewKeyspace(env)
	if err != nil {
		return nil, err
	}
	// A take is not retried: its reply lost, it may have charged the
	// bucket, and a failed take is decided in process.
	o, err := parseURL(url, timeout, timeout)
	if err != nil {
		return nil, err
	}
	o.ContextTimeoutEnabled = true
	return &Limiter{rdb: goredis.NewClient(o), ks: ks}, nil
}

// Close closes the connections.
func (l *Limiter) Close() error { return l.rdb.Close() }

// Timeout is how long dialling and each command may take.
func (l *Limiter) Timeout() time.Duration { return l.rdb.Options().ReadTimeout }

// gcraScript is ratelimit.Decide in Lua (see there for the rule). ARGV:
// now (µs), T (µs), τ (µs), cost (0: a peek). It returns {allowed, tat}:
// the stored TAT when admitted, else max(TAT, now), from which the caller
// computes the headers with ratelimit.Admitted or Denied. Integers below
// 2^53 are exact in Lua numbers.
var gcraScript = goredis.NewScript(`
local now = tonumber(ARGV[1])
local t = tonumber(ARGV[2])
local tau = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local base = math.max(tat, now)
local c = cost
if c < 1 then c = 1 end
local nxt = base + c * t
if nxt - now > tau then
  return {0, base}
end
if cost < 1 then
  return {1, base}
end
redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.ceil((nxt - now) / 1000))
return {1, nxt}
`)

// Take implements ratelimit.Store.
func (l *Limiter) Take(ctx context.Context, key string, lim ratelimit.Limit, cost int, now time.Time) (ratelimit.Result, error) {
	us := ratelimit.Micros(now)
	t, tau := lim.Interval(), lim.Tolerance()
	v, err := gcraScript.Run(ctx, l.rdb, []string{l.ks.RateLimit(key)}, us, t, tau, cost).Int64Slice()
	if err != nil {
		return ratelimit.Result{}, fmt.Errorf("redis: rate limit: %w", err)
	}
	if len(v) != 2 {
		return ratelimit.Result{}, fmt.Errorf("redis: rate limit: the script answered %v", v)
	}
	if v[0] == 1 {
		return ratelimit.Admitted(v[1], us, lim), nil
	}
	return ratelimit.Denied(v[1], us, lim, max(cost, 1)), nil
}

// refundScript is ratelimit.Refunded in Lua. ARGV: now (µs), T (µs),
// cost. A bucket whose TAT has passed is left alone (it is full).
var refundScript = goredis.NewScript(`
local now = tonumber(ARGV[1])
local t = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat <= now then
  return 0
end
local nt = math.max(tat - cost * t, now)
if nt <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%d', nt), 'PX', math.ceil((nt - now) / 1000))
end
return 1
`)

// Refund implements ratelimit.Refunder.
func (l *Limiter) Refund(ctx context.Context, key string, lim ratelimit.Limit, cost int, now time.Time) error {
	if lim.Unlimited() || cost <= 0 {
		return nil
	}
	err := refundScript.Run(ctx, l.rdb, []string{l.ks.RateLimit(key)}, ratelimit.Micros(now), lim.Interval(), cost).Err()
	if err != nil {
		return fmt.Errorf("redis: rate limit refund: %w", err)
	}
	return nil
}
