-- 0020_feed: the activity feed (feed.go), as sqlite/migrations/0020_feed.sql
-- describes it. keys and old are bigint[] (NULL: none).
CREATE TABLE feed (
	board  text COLLATE "C" NOT NULL,
	seq    bigint   NOT NULL,
	kind   smallint NOT NULL,
	at_ms  bigint   NOT NULL,
	period text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	keys   bigint[],
	old    bigint[],
	other  text COLLATE "C" NOT NULL,
	data   text,
	PRIMARY KEY (board, seq, kind)
);

CREATE INDEX feed_order ON feed (at_ms, board, seq, kind);
CREATE INDEX feed_board_order ON feed (board, at_ms, seq, kind);
