-- 0070_quota: board quotas (issue 9, section 2) count a player's
-- submissions in the current period from the log. This index finds them
-- without reading the board's whole log: one range per (board, period,
-- player), seq (the key of the table) included.
CREATE INDEX submissions_player ON submissions (board, period, player);
