package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/redis"
)

// RateConfig is the rate limit flags (docs/API.md "Rate limits"). Each
// limit is "N/window" or "off"; an empty string (the zero Config that
// tests embed) is off too: the flags carry the defaults.
type RateConfig struct {
	Submit         string // per principal and board
	Key            string // every other request of a principal
	Anon           string // requests without credentials, per client address
	AuthFail       string // failed authentications, per client address
	Boards         string // board=N/window,... overrides of Submit
	TrustedProxies string // CIDRs whose X-Forwarded-For is believed
	// StoreTimeout bounds one decision on the shared store (PostgreSQL or
	// Redis); past it the node decides alone (0: the limiter's default).
	StoreTimeout time.Duration
}

func (c *RateConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Submit, "rate-submit", "6000/1m", "rate limit of each API key's submissions to each board, N/window or off")
	fs.StringVar(&c.Key, "rate-key", "60000/1m", "rate limit of each API key's other requests, N/window or off")
	fs.StringVar(&c.Anon, "rate-anon", "1200/1m", "rate limit of requests without credentials, per client address (IPv6: per /64), N/window or off")
	fs.StringVar(&c.AuthFail, "rate-auth-fail", "20/1m", "failed authentications per client address; past it credentials from that address get 429, N/window or off")
	fs.StringVar(&c.Boards, "rate-boards", "", "per-board overrides of --rate-submit, e.g. daily=60/1m,chess=off")
	fs.DurationVar(&c.StoreTimeout, "rate-store-timeout", 200*time.Millisecond, "how long a rate limit decision waits for the shared store (PostgreSQL or Redis); past it, and for the next second, each node enforces the limits alone")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "CIDRs or addresses of reverse proxies whose X-Forwarded-For gives the client address (rate limits, per-IP stream cap), e.g. 10.0.0.0/8")
}

// parsed checks the flags and returns the limits and proxies; a mistake
// is a usage error naming the flag.
func (c *RateConfig) parsed() (podiumhttp.RateLimits, []netip.Prefix, error) {
	var rl podiumhttp.RateLimits
	for _, f := range []struct {
		name, v string
		dst     *ratelimit.Limit
	}{{"rate-submit", c.Submit, &rl.Submit}, {"rate-key", c.Key, &rl.Key}, {"rate-anon", c.Anon, &rl.Anon}, {"rate-auth-fail", c.AuthFail, &rl.AuthFail}} {
		if f.v == "" {
			continue
		}
		l, err := ratelimit.ParseLimit(f.v)
		if err != nil {
			return rl, nil, usagef("serve", "--%s: %v", f.name, err)
		}
		*f.dst = l
	}
	for _, kv := range strings.Split(c.Boards, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		b, v, ok := strings.Cut(kv, "=")
		l, err := ratelimit.ParseLimit(v)
		if !ok || err != nil {
			return rl, nil, usagef("serve", "--rate-boards: %q is not board=N/window (e.g. daily=60/1m)", kv)
		}
		if rl.Boards == nil {
			rl.Boards = map[string]ratelimit.Limit{}
		}
		if l.Unlimited() { // "off" for one board: no limit there
			l = ratelimit.Limit{}
		}
		rl.Boards[b] = l
	}
	if c.StoreTimeout != 0 && (c.StoreTimeout < time.Millisecond || c.StoreTimeout > time.Minute) {
		return rl, nil, usagef("serve", "--rate-store-timeout: %s is not between 1ms and 1m", c.StoreTimeout)
	}
	proxies, err := podiumhttp.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return rl, nil, usagef("serve", "--trusted-proxies: %v", err)
	}
	return rl, proxies, nil
}

// rateWiring is what Main holds for the rate limits.
type rateWiring struct {
	redis *redis.Limiter
	stop  context.CancelFunc
}

// openRateLimits builds the limiter: on Redis when --redis is given, else
// on the PostgreSQL database with --db, else in memory (one node). pg is
// the PostgreSQL store (nil with SQLite).
func (m *Main) openRateLimits(pg *postgres.Store, reg prometheus.Registerer) (*podiumhttp.RateLimits, []netip.Prefix, error) {
	rl, proxies, err := m.Config.RateLimit.parsed()
	if err != nil {
		return nil, nil, err
	}
	cfg := ratelimit.Config{Logger: m.log, Registerer: reg, Now: m.Now, Timeout: m.Config.RateLimit.StoreTimeout}
	m.rates = &rateWiring{}
	switch {
	case m.Config.Redis != "":
		if m.rates.redis, err = redis.OpenLimiter(m.Config.Redis, m.Config.Env, m.Config.RateLimit.StoreTimeout); err != nil {
			return nil, nil, fmt.Errorf("--redis: %w", err)
		}
		cfg.Shared, cfg.Name = m.rates.redis, "redis"
	case pg != nil:
		cfg.Shared, cfg.Name = pg.RateLimits(), "postgres"
	}
	rl.Limiter = ratelimit.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	m.rates.stop = cancel
	go rl.Limiter.RunSweeper(ctx, time.Minute, 1000)
	return &rl, proxies, nil
}

func (m *Main) closeRateLimits() {
	if m.rates == nil {
		return
	}
	if m.rates.stop != nil {
		m.rates.stop()
	}
	if m.rates.redis != nil {
		m.rates.redis.Close()
	}
}
