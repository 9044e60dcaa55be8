-- 0080_evidence: evidence (replay) uploads (issue 9, section 4).
--
-- evidence_content holds each player's distinct content once: the gzip
-- bytes as first sent, keyed by the player and the SHA-256 of the inflated
-- bytes (dedupe never crosses players, so no one learns another player's
-- hashes). refs counts the attachments that use it; the row goes with the
-- last of them.
CREATE TABLE evidence_content (
	player            TEXT    NOT NULL,
	content_sha256    TEXT    NOT NULL,
	compressed_sha256 TEXT    NOT NULL,
	bytes             INTEGER NOT NULL,
	inflated_bytes    INTEGER NOT NULL,
	events            INTEGER NOT NULL,
	data              BLOB    NOT NULL,
	refs              INTEGER NOT NULL,
	created_ms        INTEGER NOT NULL,
	PRIMARY KEY (player, content_sha256)
) STRICT;

-- evidence: which content is attached to which submission. expires_ms is
-- absolute (NULL: kept for ever): the TTL of unpublished evidence, fixed
-- once more at promotion; reads never move it. Deleting a board sets it to
-- 0 and the sweeper removes the rows.
CREATE TABLE evidence (
	board          TEXT    NOT NULL,
	player         TEXT    NOT NULL,
	seq            INTEGER NOT NULL,
	content_sha256 TEXT    NOT NULL,
	created_ms     INTEGER NOT NULL,
	expires_ms     INTEGER,
	promoted_ms    INTEGER,
	PRIMARY KEY (board, player, seq)
) STRICT, WITHOUT ROWID;
-- The sweep reads the oldest expiries first.
CREATE INDEX evidence_expires ON evidence (expires_ms) WHERE expires_ms IS NOT NULL;
