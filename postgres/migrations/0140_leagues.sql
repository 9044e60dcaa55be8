-- 0140_leagues: leagues (issue 21). The same tables as SQLite's 0140.
-- Placements are written under the board's head lock (the group that
-- places a player holds it and has caught up first), so seq is dense and
-- a tier's cohorts fill in order on every node.

CREATE TABLE league_periods (
	board      text COLLATE "C" NOT NULL,
	period     text COLLATE "C" NOT NULL,
	start_ms   bigint NOT NULL,
	settled_ms bigint NOT NULL DEFAULT 0,
	players    bigint NOT NULL DEFAULT 0,
	promoted   bigint NOT NULL DEFAULT 0,
	relegated  bigint NOT NULL DEFAULT 0,
	epoch      bigint NOT NULL DEFAULT 0,
	holder     text NOT NULL DEFAULT '',
	PRIMARY KEY (board, period)
);

CREATE TABLE league_members (
	board  text COLLATE "C" NOT NULL,
	period text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	tier   integer NOT NULL,
	cohort integer NOT NULL,
	seq    bigint NOT NULL,
	at_ms  bigint NOT NULL,
	PRIMARY KEY (board, period, player),
	UNIQUE (board, period, seq)
);
CREATE INDEX league_members_cohort ON league_members (board, period, tier, cohort);

CREATE TABLE league_results (
	board    text COLLATE "C" NOT NULL,
	player   text COLLATE "C" NOT NULL,
	period   text COLLATE "C" NOT NULL,
	tier     integer NOT NULL,
	cohort   integer NOT NULL,
	rank     integer NOT NULL,
	outcome  text NOT NULL,
	new_tier integer NOT NULL,
	PRIMARY KEY (board, player, period)
);

CREATE TABLE league_tiers (
	board  text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	tier   integer NOT NULL,
	PRIMARY KEY (board, player)
);
