-- 0090_review: moderation (issue 9, section 5). review_items holds the
-- submissions a board's review setting or a player's freeze held: not in
-- the log, so not ranked, until a moderator approves one (the approval
-- logs it as a new submission, seq names that row) or rejects it. keys is
-- a JSON array of the submitted int64 values; times are unix ms.
CREATE TABLE review_items (
	id           TEXT    NOT NULL PRIMARY KEY,
	board        TEXT    NOT NULL,
	period       TEXT    NOT NULL,
	player       TEXT    NOT NULL,
	keys         TEXT    NOT NULL,
	meta         TEXT,
	submitted_ms INTEGER NOT NULL,
	reason       TEXT    NOT NULL,
	status       TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
	decided_ms   INTEGER,
	decided_by   TEXT    NOT NULL DEFAULT '',
	note         TEXT    NOT NULL DEFAULT '',
	seq          INTEGER
) STRICT;
-- The queue is read in (submitted, id) order, by state, board or player.
CREATE INDEX review_items_status ON review_items (status, submitted_ms, id);
CREATE INDEX review_items_board ON review_items (board, submitted_ms, id);
CREATE INDEX review_items_player ON review_items (player, submitted_ms, id);
-- A history row finds the approval that wrote it.
CREATE INDEX review_items_seq ON review_items (board, seq) WHERE seq IS NOT NULL;

-- frozen_players: players whose new submissions are all held.
CREATE TABLE frozen_players (
	player    TEXT    NOT NULL PRIMARY KEY,
	frozen_by TEXT    NOT NULL,
	reason    TEXT    NOT NULL,
	at_ms     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- A player's history is read from the log through submissions_player
-- (0070: board, period, player, then seq), one range per period. An index
-- on (board, player, seq) of its own made a group commit about 1.5x
-- slower (BenchmarkSubmitFeed, SQLite) for a read that is rare.
