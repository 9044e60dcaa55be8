-- 0050_player_sessions: player sessions (issue 9, section 1). A session is
-- a bearer token that acts as one player on one device; only the SHA-256
-- of the token is kept. marker is the SHA-256 of the Idempotency-Key it was
-- issued under ('' for none).
CREATE TABLE player_sessions (
	id           text COLLATE "C" PRIMARY KEY,
	player       text COLLATE "C" NOT NULL,
	device       text COLLATE "C" NOT NULL,
	hash         text COLLATE "C" NOT NULL UNIQUE,
	ttl_ms       bigint NOT NULL,
	created_ms   bigint NOT NULL,
	refreshed_ms bigint NOT NULL,
	expires_ms   bigint NOT NULL,
	marker       text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX player_sessions_device ON player_sessions (player, device);
CREATE INDEX player_sessions_player ON player_sessions (player, created_ms, id);
-- The sweep reads the oldest expiries first.
CREATE INDEX player_sessions_expires ON player_sessions (expires_ms);
CREATE UNIQUE INDEX player_sessions_marker ON player_sessions (marker) WHERE marker <> '';

-- Session changes travel on the change feed like key changes.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check CHECK (kind IN ('board', 'player', 'key', 'session'));
