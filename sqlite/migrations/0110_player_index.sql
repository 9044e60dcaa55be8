-- 0110_player_index: the player index of 0070 (a player's rows of a board,
-- for quota counts and history) cost every logged row a random B-tree
-- insert: a 1000-score group commit took 13-20 ms with it and 3 ms without
-- (BenchmarkCommitLog). It now holds only the rows of boards that use it
-- (a quota or review holds), marked by px: NULL or 1 is indexed, 0 is not.
-- Rows logged before this migration have px NULL and stay indexed, so the
-- column is added without rewriting the log. Other boards read a player's
-- history by scanning their log backwards, a bounded stretch per page
-- (player_index.go).
ALTER TABLE submissions ADD COLUMN px INTEGER;
DROP INDEX submissions_player;
CREATE INDEX submissions_player ON submissions (board, period, player) WHERE px IS NOT 0;

-- A board that starts using the index has its earlier rows (px 0) brought
-- in, in chunks of seqs, from next down to 1; a row here is a backfill
-- not finished yet, resumed when the store opens.
CREATE TABLE player_index_backfill (
	board TEXT    NOT NULL PRIMARY KEY,
	next  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
