-- 0050_player_sessions: player sessions (issue 9, section 1). A session is
-- a bearer token that acts as one player on one device; only the SHA-256
-- of the token is kept. marker is the SHA-256 of the Idempotency-Key it was
-- issued under ('' for none).
CREATE TABLE player_sessions (
	id           TEXT    NOT NULL PRIMARY KEY,
	player       TEXT    NOT NULL,
	device       TEXT    NOT NULL,
	hash         TEXT    NOT NULL UNIQUE,
	ttl_ms       INTEGER NOT NULL,
	created_ms   INTEGER NOT NULL,
	refreshed_ms INTEGER NOT NULL,
	expires_ms   INTEGER NOT NULL,
	marker       TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE UNIQUE INDEX player_sessions_device ON player_sessions (player, device);
CREATE INDEX player_sessions_player ON player_sessions (player, created_ms, id);
-- The sweep reads the oldest expiries first.
CREATE INDEX player_sessions_expires ON player_sessions (expires_ms);
CREATE UNIQUE INDEX player_sessions_marker ON player_sessions (marker) WHERE marker <> '';
