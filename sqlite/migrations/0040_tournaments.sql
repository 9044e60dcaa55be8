-- 0040_tournaments: tournaments and points (issue 8, section 3). The
-- tournament settings live in the board document; these tables hold what a
-- tournament accumulates.

-- tournament_joins: the players who joined a tournament, numbered n from 1
-- in the order they were accepted (the count is max(n)).
CREATE TABLE tournament_joins (
	board  TEXT    NOT NULL,
	player TEXT    NOT NULL,
	n      INTEGER NOT NULL,
	at_ms  INTEGER NOT NULL,
	PRIMARY KEY (board, player)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX tournament_joins_n ON tournament_joins (board, n);

-- tournament_payouts: what settlement paid each player of a tournament,
-- written in the transaction of the credits, so a second run pays only
-- the difference.
CREATE TABLE tournament_payouts (
	board  TEXT    NOT NULL,
	player TEXT    NOT NULL,
	rank   INTEGER NOT NULL,
	points INTEGER NOT NULL,
	at_ms  INTEGER NOT NULL,
	PRIMARY KEY (board, player)
) STRICT, WITHOUT ROWID;

-- tournament_settlements: one row per settled tournament.
CREATE TABLE tournament_settlements (
	board      TEXT    NOT NULL PRIMARY KEY,
	settled_ms INTEGER NOT NULL,
	runs       INTEGER NOT NULL,
	players    INTEGER NOT NULL,
	paid       INTEGER NOT NULL,
	epoch      INTEGER NOT NULL,
	holder     TEXT    NOT NULL
) STRICT, WITHOUT ROWID;

-- leases: named leases for work that runs once in a cluster (settlement).
-- epoch grows each time the lease changes hands; a commit made under a
-- lease checks it (fencing).
CREATE TABLE leases (
	name       TEXT    NOT NULL PRIMARY KEY,
	holder     TEXT    NOT NULL,
	epoch      INTEGER NOT NULL,
	expires_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
