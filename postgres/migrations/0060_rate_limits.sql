-- 0060_rate_limits: the buckets of the rate limits shared by every node
-- (package ratelimit; issue 9, section 2). SQLite has no such table: one
-- node keeps its buckets in memory.

-- rate_limit_buckets: one row per bucket, holding its GCRA theoretical
-- arrival time (unix microseconds). A request updates its row in one
-- statement (postgres/ratelimit.go). A row whose TAT has passed is a full
-- bucket, the same as no row; the sweeper deletes such rows in bounded
-- batches through tat_us_idx. Not UNLOGGED: a lost row would only refill
-- a bucket, but UNLOGGED tables are not replicated to standbys, and a
-- failover should keep the limits.
CREATE TABLE rate_limit_buckets (
	key    text COLLATE "C" PRIMARY KEY,
	tat_us bigint NOT NULL
);
CREATE INDEX rate_limit_buckets_tat_idx ON rate_limit_buckets (tat_us);
