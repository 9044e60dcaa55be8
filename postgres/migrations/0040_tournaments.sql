-- 0040_tournaments: tournaments and points (issue 8, section 3). The
-- tournament settings live in the board document; these tables hold what a
-- tournament accumulates. The same tables as SQLite's 0040.

-- tournament_joins: the players who joined a tournament, numbered n from 1
-- in the order they were accepted. Joins are written under the board's
-- head lock (a join and the board's writers take turns), so n is dense.
CREATE TABLE tournament_joins (
	board  text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	n      bigint NOT NULL,
	at_ms  bigint NOT NULL,
	PRIMARY KEY (board, player),
	UNIQUE (board, n)
);

-- tournament_payouts: what settlement paid each player of a tournament,
-- written in the transaction of the credits.
CREATE TABLE tournament_payouts (
	board  text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	rank   bigint NOT NULL,
	points bigint NOT NULL,
	at_ms  bigint NOT NULL,
	PRIMARY KEY (board, player)
);

-- tournament_settlements: one row per settled tournament.
CREATE TABLE tournament_settlements (
	board      text COLLATE "C" PRIMARY KEY,
	settled_ms bigint NOT NULL,
	runs       bigint NOT NULL,
	players    bigint NOT NULL,
	paid       bigint NOT NULL,
	epoch      bigint NOT NULL,
	holder     text NOT NULL
);

-- leases: named leases for work that runs once in the cluster. epoch grows
-- each time the lease changes hands; a commit made under a lease calls
-- podium_fence first, which locks the lease row and fails the transaction
-- unless the lease is still held at that epoch (fencing: a node that lost
-- its lease while it paused cannot commit what it computed under it).
CREATE TABLE leases (
	name       text COLLATE "C" PRIMARY KEY,
	holder     text NOT NULL,
	epoch      bigint NOT NULL,
	expires_ms bigint NOT NULL
);

CREATE FUNCTION podium_fence(p_name text, p_holder text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM leases WHERE name = p_name AND holder = p_holder AND epoch = p_epoch FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'podium: lease % is no longer held by % at epoch %', p_name, p_holder, p_epoch
			USING ERRCODE = 'P0004';
	END IF;
END
$$;
