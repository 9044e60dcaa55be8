package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTarget runs the Redis equivalents of the podium scenarios on one
// sorted set under a key prefix unique to this process, deleted at the end.
type redisTarget struct {
	rdb     *redis.Client
	prefix  string // podiumbench:<pid>:
	key     string
	names   []string
	version string
}

// newRedis connects with a pool of conns connections, one per worker, and
// commands sent one at a time (no pipelining) in the scenarios.
func newRedis(ctx context.Context, addr string, conns int, names []string) (*redisTarget, error) {
	rdb := redis.NewClient(&redis.Options{
		Addr:            addr,
		PoolSize:        conns,
		MinIdleConns:    conns,
		DisableIdentity: true,
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    10 * time.Second,
	})
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w", addr, err)
	}
	prefix := fmt.Sprintf("podiumbench:%d:", os.Getpid())
	r := &redisTarget{rdb: rdb, prefix: prefix, key: prefix + "board", names: names}
	if info, err := rdb.Info(ctx, "server").Result(); err == nil {
		sc := bufio.NewScanner(strings.NewReader(info))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "redis_version:"); ok {
				r.version = strings.TrimSpace(v)
			}
		}
	}
	return r, nil
}

// close deletes every key under the harness's prefix and the connections.
// It runs even after an interrupt, so it uses its own context.
func (r *redisTarget) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var firstErr error
	iter := r.rdb.Scan(ctx, 0, r.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := r.rdb.Del(ctx, iter.Val()).Err(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if err := iter.Err(); err != nil && firstErr == nil {
		firstErr = err
	}
	if err := r.rdb.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	return firstErr
}

// preload adds every player with a random score, chunk members per ZADD and
// many ZADDs per pipeline, mirroring the podium preload.
func (r *redisTarget) preload(ctx context.Context, chunk int) (int64, error) {
	rng := rand.New(rand.NewPCG(7, 7))
	pipe := r.rdb.Pipeline()
	members := make([]redis.Z, 0, chunk)
	for lo := 0; lo < len(r.names); lo += chunk {
		members = members[:0]
		for _, name := range r.names[lo:min(lo+chunk, len(r.names))] {
			members = append(members, redis.Z{Score: float64(rng.Int64N(maxScore)), Member: name})
		}
		pipe.ZAddGT(ctx, r.key, members...)
		if pipe.Len() >= 20 {
			if _, err := pipe.Exec(ctx); err != nil {
				return 0, fmt.Errorf("redis preload: %w", err)
			}
		}
	}
	if pipe.Len() > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return 0, fmt.Errorf("redis preload: %w", err)
		}
	}
	n, err := r.rdb.ZCard(ctx, r.key).Result()
	if err != nil {
		return 0, fmt.Errorf("redis preload check: %w", err)
	}
	return n, nil
}

// redisErr classifies an error: a Redis reply (including a missing member)
// is an answer, anything else a connection problem.
func redisErr(op string, err error) error {
	var re redis.Error
	if errors.Is(err, redis.Nil) {
		return &answerError{op + ": no such member"}
	}
	if errors.As(err, &re) {
		return &answerError{op + ": " + err.Error()}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// redisOps returns n operations for scenario and the command(s) one
// operation sends. ZADD uses GT, which keeps the higher score as a podium
// "best" board with a descending key does.
func (r *redisTarget) redisOps(scenario string, n, batch int) ([]opFunc, string) {
	ctx := context.Background()
	ops := make([]opFunc, n)
	var desc string
	for i := range ops {
		rng := rand.New(rand.NewPCG(uint64(i+1), 0x5bd1e995))
		pick := func() string { return r.names[rng.IntN(len(r.names))] }
		switch scenario {
		case "single":
			// A podium submit answers with the new rank; this is the pair
			// of round trips a Redis-backed leaderboard needs for that.
			desc = "ZADD GT+ZREVRANK"
			ops[i] = func() (int, int, error) {
				m := pick()
				if err := r.rdb.ZAddGT(ctx, r.key, redis.Z{Score: float64(rng.Int64N(maxScore)), Member: m}).Err(); err != nil {
					return 0, 0, redisErr("ZADD", err)
				}
				if err := r.rdb.ZRevRank(ctx, r.key, m).Err(); err != nil {
					return 0, 0, redisErr("ZREVRANK", err)
				}
				return 1, 0, nil
			}
		case "batch":
			desc = fmt.Sprintf("ZADD GT (%d members)", batch)
			members := make([]redis.Z, batch)
			ops[i] = func() (int, int, error) {
				for j := range members {
					members[j] = redis.Z{Score: float64(rng.Int64N(maxScore)), Member: pick()}
				}
				if err := r.rdb.ZAddGT(ctx, r.key, members...).Err(); err != nil {
					return 0, 0, redisErr("ZADD", err)
				}
				return batch, 0, nil
			}
		case "top":
			desc = "ZREVRANGE 0 99 WITHSCORES"
			ops[i] = func() (int, int, error) {
				if err := r.rdb.ZRevRangeWithScores(ctx, r.key, 0, 99).Err(); err != nil {
					return 0, 0, redisErr("ZREVRANGE", err)
				}
				return 1, 0, nil
			}
		case "rank":
			desc = "ZREVRANK"
			ops[i] = func() (int, int, error) {
				if err := r.rdb.ZRevRank(ctx, r.key, pick()).Err(); err != nil {
					return 0, 0, redisErr("ZREVRANK", err)
				}
				return 1, 0, nil
			}
		default:
			panic("unknown scenario " + scenario)
		}
	}
	return ops, desc
}
