-- 0100_restore: the log takes restore rows (kind 2, podium import): the
-- entry becomes exactly the row's keys, reached at at_ms, in its period.
ALTER TABLE submissions DROP CONSTRAINT submissions_kind_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_kind_check CHECK (kind IN (0, 1, 2));
