-- 0070_quota: board quotas (issue 9, section 2) count a player's
-- submissions in the current period from the log, under the board's head
-- lock. This index finds them without reading the board's whole log. It
-- is built inside the migration's transaction, which holds writes to
-- submissions while it builds: on a large existing log, expect a pause at
-- the upgrade (about a second per few million rows).
CREATE INDEX submissions_player ON submissions (board, period, player, seq);
