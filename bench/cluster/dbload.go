package main

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
)

// usage is a snapshot of the counters that say how much work the nodes,
// the database and Redis did: the difference of two is the load of what
// ran between them.
type usage struct {
	at time.Time
	// nodeCPU is the CPU time of every node process, by pid.
	nodeCPU map[int]time.Duration
	// dbCPU is the CPU time of the PostgreSQL backends serving the
	// cluster's sessions (found by application_name), by pid.
	dbCPU map[int]time.Duration
	// xacts is pg_stat_database's xact_commit + xact_rollback of the
	// database: every statement outside a transaction counts as one. It
	// covers the whole database, other users included.
	xacts int64
	// scans, tupRead, tupWritten add up pg_stat_user_tables over the
	// cluster's schema: table scans (sequential and index), rows read
	// and rows inserted, updated or deleted.
	scans, tupRead, tupWritten int64
	// redisCmds and redisPublish are Redis's total commands processed and
	// PUBLISH calls (our own redis-server only).
	redisCmds, redisPublish int64
	// notices counts the NOTIFYs on the cluster's channel that the
	// harness's own listener received.
	notices   int64
	pg, redis bool // which parts were read
}

// load is the difference of two usage snapshots, per second.
type load struct {
	Seconds                    float64
	NodeCores, DBCores         float64
	Xacts, Scans, TupRead, Tup float64 // per second
	RedisCmds, RedisPublish    float64 // per second
	Notices                    float64 // PostgreSQL notifications per second
	PG, Redis                  bool
}

// cpuSum adds the CPU time each pid gained between a and b; a pid that is
// only in b started in between and counts from zero.
func cpuSum(a, b map[int]time.Duration) time.Duration {
	var sum time.Duration
	for pid, t := range b {
		sum += t - a[pid]
	}
	return sum
}

// rate returns the load between snapshots a and b.
func rate(a, b usage) load {
	s := b.at.Sub(a.at).Seconds()
	if s <= 0 {
		return load{}
	}
	per := func(x, y int64) float64 { return float64(y-x) / s }
	return load{
		Seconds:   s,
		NodeCores: cpuSum(a.nodeCPU, b.nodeCPU).Seconds() / s,
		DBCores:   cpuSum(a.dbCPU, b.dbCPU).Seconds() / s,
		Xacts:     per(a.xacts, b.xacts), Scans: per(a.scans, b.scans),
		TupRead: per(a.tupRead, b.tupRead), Tup: per(a.tupWritten, b.tupWritten),
		RedisCmds: per(a.redisCmds, b.redisCmds), RedisPublish: per(a.redisPublish, b.redisPublish),
		Notices: per(a.notices, b.notices),
		PG:      a.pg && b.pg, Redis: a.redis && b.redis,
	}
}

// snapshot reads the counters for cluster c. Failures leave parts unread
// (pg or redis false) rather than stopping a run.
func (h *harness) snapshot(ctx context.Context, c *cluster) usage {
	u := usage{at: time.Now(), nodeCPU: map[int]time.Duration{}, dbCPU: map[int]time.Duration{}}
	for _, nd := range c.nodes {
		if nd.cmd != nil && !nd.exited() {
			if t, ok := procCPU(nd.cmd.Process.Pid); ok {
				u.nodeCPU[nd.cmd.Process.Pid] = t
			}
		}
	}
	if c.schema != "" {
		u.pg = h.pgCounters(ctx, c.schema, &u) == nil
	}
	if c.listener != nil {
		u.notices = c.listener.n.Load()
	}
	if c.spec.Redis && h.redis != nil {
		u.redis = h.redisCounters(ctx, &u) == nil
	}
	return u
}

func (h *harness) pgCounters(ctx context.Context, schema string, u *usage) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, h.db)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1`, schema+"-%")
	if err != nil {
		return err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if t, ok := procCPU(int(pid)); ok {
			u.dbCPU[int(pid)] = t
		}
	}
	// Counters are flushed by each backend at most once a second; a
	// snapshot in the middle of a window may miss up to a second's worth,
	// which the next one picks up. This snapshot's own three statements
	// count too (0.3/s over a 10 s window).
	err = conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&u.xacts)
	if err != nil {
		return err
	}
	return conn.QueryRow(ctx, `SELECT coalesce(sum(coalesce(seq_scan,0) + coalesce(idx_scan,0)),0)::bigint,
		coalesce(sum(coalesce(seq_tup_read,0) + coalesce(idx_tup_fetch,0)),0)::bigint,
		coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del),0)::bigint
		FROM pg_stat_user_tables WHERE schemaname = $1`, schema).Scan(&u.scans, &u.tupRead, &u.tupWritten)
}

func (h *harness) redisCounters(ctx context.Context, u *usage) error {
	rdb := goredis.NewClient(&goredis.Options{Addr: h.redis.addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "stats", "commandstats").Result()
	if err != nil {
		return err
	}
	u.redisCmds, u.redisPublish = parseRedisInfo(info)
	return nil
}

// parseRedisInfo returns total_commands_processed and the calls of
// PUBLISH from the text of INFO stats commandstats.
func parseRedisInfo(info string) (cmds, publish int64) {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			cmds, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "cmdstat_publish:"); ok {
			for _, kv := range strings.Split(v, ",") {
				if n, ok := strings.CutPrefix(kv, "calls="); ok {
					publish, _ = strconv.ParseInt(n, 10, 64)
				}
			}
		}
	}
	return cmds, publish
}

// parseStatCPU reads utime and stime (fields 14 and 15) from the text of
// /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// hold spaces, so fields are counted after its closing parenthesis.
func parseStatCPU(s string) (time.Duration, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), so utime (field 14) is f[11], stime f[12].
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || u < 0 || st < 0 {
		return 0, false
	}
	return time.Duration(u+st) * 10 * time.Millisecond, true // USER_HZ is 100 on every Linux this runs on
}

// noticeListener counts the notifications on a cluster's LISTEN/NOTIFY
// channel (podium:{env}:v1:notices), from a connection of the harness's
// own: one more listener, which PostgreSQL delivers every notice to.
type noticeListener struct {
	n      atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

// listenNotices starts counting the notices of env on the database dsn.
func listenNotices(ctx context.Context, dsn, env string) (*noticeListener, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	channel := "podium:" + env + ":v1:notices"
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &noticeListener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer conn.Close(context.Background())
		for {
			if _, err := conn.WaitForNotification(lctx); err != nil {
				return
			}
			l.n.Add(1)
		}
	}()
	return l, nil
}

func (l *noticeListener) close() {
	l.cancel()
	<-l.done
}

// listening counts the cluster's database sessions that are listening
// for notices (their last statement was a LISTEN): how many nodes use
// LISTEN/NOTIFY.
func (h *harness) listening(ctx context.Context, c *cluster) (int, error) {
	conn, err := pgx.Connect(ctx, h.db)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, `SELECT count(DISTINCT application_name) FROM pg_stat_activity
		WHERE application_name LIKE $1 AND query ILIKE 'LISTEN %'`, c.schema+"-%").Scan(&n)
	return n, err
}
