-- 0100_restore: the log takes restore rows (kind 2, podium import). On
-- SQLite the kind is the first varint of submissions.rec, which no
-- constraint checks, so nothing changes; the number stays in step with
-- PostgreSQL's 0100_restore.
SELECT 1;
