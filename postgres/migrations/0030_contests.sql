-- 0030_contests: CTF contests (package contest), as in the SQLite store.
-- challenges are JSON documents (body) beside the columns the store
-- queries. The solves are the authority; standings are recomputed from
-- them. version moves on with every change of the contest or its
-- challenges, seq is the last solve's seq: a node compares both with
-- what it holds to know what to reload.
CREATE TABLE contests (
	id         text COLLATE "C" NOT NULL PRIMARY KEY,
	body       text COLLATE "C" NOT NULL,
	created_ms bigint  NOT NULL,
	updated_ms bigint  NOT NULL,
	version    bigint  NOT NULL,
	seq        bigint  NOT NULL DEFAULT 0
);

CREATE TABLE contest_challenges (
	contest    text COLLATE "C" NOT NULL REFERENCES contests (id),
	id         text COLLATE "C" NOT NULL,
	body       text COLLATE "C" NOT NULL,
	ord        bigint  NOT NULL,
	created_ms bigint  NOT NULL,
	updated_ms bigint  NOT NULL,
	PRIMARY KEY (contest, id)
);

-- A solve is accepted once per team and challenge.
CREATE TABLE contest_solves (
	contest   text COLLATE "C" NOT NULL,
	seq       bigint  NOT NULL,
	challenge text COLLATE "C" NOT NULL,
	team      text COLLATE "C" NOT NULL,
	at_ms     bigint  NOT NULL,
	PRIMARY KEY (contest, seq),
	UNIQUE (contest, challenge, team)
);

-- The append-only audit log of every attempt reported, right or wrong.
-- No flag is ever stored: podium takes verdicts from a trusted judge. idem
-- is the request's Idempotency-Key: a retry gets the attempt back.
CREATE TABLE contest_attempts (
	id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	contest   text COLLATE "C" NOT NULL,
	challenge text COLLATE "C" NOT NULL,
	team      text COLLATE "C" NOT NULL,
	result    text COLLATE "C" NOT NULL,
	at_ms     bigint  NOT NULL,
	key_id    text COLLATE "C" NOT NULL,
	seq       bigint  NOT NULL DEFAULT 0,
	idem      text COLLATE "C"
);
CREATE INDEX contest_attempts_by_contest ON contest_attempts (contest, id);
CREATE UNIQUE INDEX contest_attempts_idem ON contest_attempts (contest, key_id, idem) WHERE idem IS NOT NULL;

-- Standings snapshots, one per (contest, time): nodes that take the same
-- snapshot store it once.
CREATE TABLE contest_snapshots (
	contest text COLLATE "C" NOT NULL,
	at_ms   bigint  NOT NULL,
	seq     bigint  NOT NULL,
	body    bytea   NOT NULL,
	PRIMARY KEY (contest, at_ms)
);
