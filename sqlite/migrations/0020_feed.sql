-- 0020_feed: the activity feed (feed.go). One row per event: a new
-- personal best, a new #1, a settled tournament. (board, seq, kind) is the
-- event's identity: seq is the seq of the submission that caused it, so a
-- node that stores an event twice keeps one. Rows are written in the same
-- transaction as that submission, capped per board by pruning the oldest
-- (podium.FeedStore.PruneFeed). at_ms is when the write was accepted (unix
-- ms); keys and old are JSON arrays of int64 (NULL: none); other is the
-- previous #1 of a new_leader event; data the object of a settled
-- tournament. The feed's order is (at_ms, board, seq, kind).
CREATE TABLE feed (
	board  TEXT    NOT NULL,
	seq    INTEGER NOT NULL,
	kind   INTEGER NOT NULL,
	at_ms  INTEGER NOT NULL,
	period TEXT    NOT NULL,
	player TEXT    NOT NULL,
	keys   TEXT,
	old    TEXT,
	other  TEXT    NOT NULL,
	data   TEXT,
	PRIMARY KEY (board, seq, kind)
) STRICT, WITHOUT ROWID;

CREATE INDEX feed_order ON feed (at_ms, board, seq, kind);
CREATE INDEX feed_board_order ON feed (board, at_ms, seq, kind);
