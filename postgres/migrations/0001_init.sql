-- 0001_init: podium's schema on PostgreSQL, the same data as the SQLite
-- schema, typed for PostgreSQL.
--
-- Times are unix milliseconds (UTC) in bigint columns, as on SQLite, so both
-- stores read and write the same numbers. Ids, periods and players use the
-- "C" collation: byte order, which is how SQLite compares and what makes
-- period ids sort in time order, whatever the database's default collation
-- (and the cheapest comparison for the primary keys). JSON (board bodies and
-- meta objects) is text: jsonb would reorder keys and drop whitespace, and
-- podium hands meta back byte for byte; an empty meta object is NULL. Cast
-- to jsonb to query it.

-- boards: the definition (title, keys, mode, reset, public, meta) is one
-- JSON document, so a new board field needs no migration.
CREATE TABLE boards (
	id         text COLLATE "C" PRIMARY KEY,
	body       text   NOT NULL,
	created_ms bigint NOT NULL,
	updated_ms bigint NOT NULL
);

CREATE TABLE players (
	id         text COLLATE "C" PRIMARY KEY,
	name       text    NOT NULL,
	hidden     boolean NOT NULL,
	meta       text,
	updated_ms bigint  NOT NULL
);

-- api_keys: hash is the hex SHA-256 of the secret, unique so that a lookup
-- by secret finds one key.
CREATE TABLE api_keys (
	id         text COLLATE "C" PRIMARY KEY,
	name       text   NOT NULL,
	scopes     text[] NOT NULL,
	boards     text[] NOT NULL,
	hash       text   NOT NULL CONSTRAINT api_keys_hash_unique UNIQUE,
	created_ms bigint NOT NULL
);

-- submissions: the append-only log, one row per accepted write, in seq order
-- per board. kind is 0 for a score, 1 for a delete; k1..k4 are the submitted
-- keys in the board's order, NULL past the board's count (all NULL for a
-- delete). Plain columns, not a packed blob as on SQLite: binary-format
-- bigints cost PostgreSQL and pgx nothing to encode, and people can read and
-- order the log in SQL.
CREATE TABLE submissions (
	board  text COLLATE "C" NOT NULL,
	seq    bigint   NOT NULL,
	at_ms  bigint   NOT NULL,
	k1     bigint,
	k2     bigint,
	k3     bigint,
	k4     bigint,
	kind   smallint NOT NULL CHECK (kind IN (0, 1)),
	period text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	meta   text,
	CONSTRAINT submissions_pkey PRIMARY KEY (board, seq),
	CHECK ((k2 IS NULL OR k1 IS NOT NULL) AND (k3 IS NULL OR k2 IS NOT NULL) AND (k4 IS NULL OR k3 IS NOT NULL))
);

-- board_heads: the last seq logged per board, moved in the same transaction
-- as the log rows, so that the head of a board is one row to read and,
-- with several podium nodes, one row to lock (SELECT ... FOR UPDATE) to
-- serialise the writers of a board.
CREATE TABLE board_heads (
	board text COLLATE "C" PRIMARY KEY,
	seq   bigint NOT NULL
);

-- entries: each player's current standing per board and period, written
-- behind the log (see watermarks). k1 is never NULL: an entry has 1 to 4
-- keys.
CREATE TABLE entries (
	board  text COLLATE "C" NOT NULL,
	period text COLLATE "C" NOT NULL,
	player text COLLATE "C" NOT NULL,
	seq    bigint NOT NULL,
	at_ms  bigint NOT NULL,
	k1     bigint NOT NULL,
	k2     bigint,
	k3     bigint,
	k4     bigint,
	meta   text,
	PRIMARY KEY (board, period, player),
	CHECK ((k3 IS NULL OR k2 IS NOT NULL) AND (k4 IS NULL OR k3 IS NOT NULL))
);

-- watermarks: the seq up to which a board's entries reflect its log; at
-- start podium loads the entries and replays the log after it. A table of
-- its own rather than a column of board_heads: a checkpoint moves it while
-- writers hold the heads.
CREATE TABLE watermarks (
	board text COLLATE "C" PRIMARY KEY,
	seq   bigint NOT NULL
);

-- idempotency: the answers to requests sent with an Idempotency-Key; status 0
-- marks a request whose writes are committed but whose answer is not yet
-- stored.
CREATE TABLE idempotency (
	scope        text COLLATE "C" NOT NULL,
	key          text COLLATE "C" NOT NULL,
	request_hash bytea   NOT NULL,
	status       integer NOT NULL,
	body         bytea   NOT NULL,
	created_ms   bigint  NOT NULL,
	PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_created ON idempotency (created_ms);
