-- 0140_leagues: leagues (issue 21). The league settings live in the board
-- document; these tables hold placements, settlements and tiers.

-- league_periods: the periods of a league in which players were placed
-- (a row from the first placement), and each one's settlement once
-- settled (settled_ms > 0).
CREATE TABLE league_periods (
	board      TEXT    NOT NULL,
	period     TEXT    NOT NULL,
	start_ms   INTEGER NOT NULL,
	settled_ms INTEGER NOT NULL DEFAULT 0,
	players    INTEGER NOT NULL DEFAULT 0,
	promoted   INTEGER NOT NULL DEFAULT 0,
	relegated  INTEGER NOT NULL DEFAULT 0,
	epoch      INTEGER NOT NULL DEFAULT 0,
	holder     TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (board, period)
) STRICT, WITHOUT ROWID;

-- league_members: a player's tier and cohort in one period, numbered seq
-- from 1 per (board, period) in placement order.
CREATE TABLE league_members (
	board  TEXT    NOT NULL,
	period TEXT    NOT NULL,
	player TEXT    NOT NULL,
	tier   INTEGER NOT NULL,
	cohort INTEGER NOT NULL,
	seq    INTEGER NOT NULL,
	at_ms  INTEGER NOT NULL,
	PRIMARY KEY (board, period, player)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX league_members_seq ON league_members (board, period, seq);
CREATE INDEX league_members_cohort ON league_members (board, period, tier, cohort);

-- league_results: each settled player's outcome in a period, by player
-- (their history).
CREATE TABLE league_results (
	board    TEXT    NOT NULL,
	player   TEXT    NOT NULL,
	period   TEXT    NOT NULL,
	tier     INTEGER NOT NULL,
	cohort   INTEGER NOT NULL,
	rank     INTEGER NOT NULL,
	outcome  TEXT    NOT NULL,
	new_tier INTEGER NOT NULL,
	PRIMARY KEY (board, player, period)
) STRICT, WITHOUT ROWID;

-- league_tiers: a player's tier as the last settlement that moved it left
-- it (no row: the lowest tier).
CREATE TABLE league_tiers (
	board  TEXT    NOT NULL,
	player TEXT    NOT NULL,
	tier   INTEGER NOT NULL,
	PRIMARY KEY (board, player)
) STRICT, WITHOUT ROWID;
