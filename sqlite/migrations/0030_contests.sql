-- 0030_contests: CTF contests (package contest). A contest and its
-- challenges are JSON documents (body) beside the columns the store
-- queries. The solves are the authority; standings are recomputed from
-- them. version moves on with every change of the contest or its
-- challenges, seq is the last solve's seq: a node compares both with
-- what it holds to know what to reload.
CREATE TABLE contests (
	id         TEXT    NOT NULL PRIMARY KEY,
	body       TEXT    NOT NULL,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	version    INTEGER NOT NULL,
	seq        INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE contest_challenges (
	contest    TEXT    NOT NULL REFERENCES contests (id),
	id         TEXT    NOT NULL,
	body       TEXT    NOT NULL,
	ord        INTEGER NOT NULL,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	PRIMARY KEY (contest, id)
) STRICT;

-- A solve is accepted once per team and challenge.
CREATE TABLE contest_solves (
	contest   TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	challenge TEXT    NOT NULL,
	team      TEXT    NOT NULL,
	at_ms     INTEGER NOT NULL,
	PRIMARY KEY (contest, seq),
	UNIQUE (contest, challenge, team)
) STRICT;

-- The append-only audit log of every attempt reported, right or wrong.
-- No flag is ever stored: podium takes verdicts from a trusted judge. idem
-- is the request's Idempotency-Key: a retry gets the attempt back.
CREATE TABLE contest_attempts (
	id        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
	contest   TEXT    NOT NULL,
	challenge TEXT    NOT NULL,
	team      TEXT    NOT NULL,
	result    TEXT    NOT NULL,
	at_ms     INTEGER NOT NULL,
	key_id    TEXT    NOT NULL,
	seq       INTEGER NOT NULL DEFAULT 0,
	idem      TEXT
) STRICT;
CREATE INDEX contest_attempts_by_contest ON contest_attempts (contest, id);
CREATE UNIQUE INDEX contest_attempts_idem ON contest_attempts (contest, key_id, idem) WHERE idem IS NOT NULL;

-- Standings snapshots, one per (contest, time): nodes that take the same
-- snapshot store it once.
CREATE TABLE contest_snapshots (
	contest TEXT    NOT NULL,
	at_ms   INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	body    BLOB    NOT NULL,
	PRIMARY KEY (contest, at_ms)
) STRICT;
