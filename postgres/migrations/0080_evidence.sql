-- 0080_evidence: evidence (replay) uploads (issue 9, section 4).
--
-- evidence_content holds each player's distinct content once: the gzip
-- bytes as first sent, keyed by the player and the SHA-256 of the inflated
-- bytes (dedupe never crosses players, so no one learns another player's
-- hashes). refs counts the attachments that use it; the row goes with the
-- last of them.
CREATE TABLE evidence_content (
	player            text COLLATE "C" NOT NULL,
	content_sha256    text COLLATE "C" NOT NULL,
	compressed_sha256 text COLLATE "C" NOT NULL,
	bytes             bigint NOT NULL,
	inflated_bytes    bigint NOT NULL,
	events            bigint NOT NULL,
	data              bytea NOT NULL,
	refs              bigint NOT NULL,
	created_ms        bigint NOT NULL,
	PRIMARY KEY (player, content_sha256)
);

-- evidence: which content is attached to which submission. expires_ms is
-- absolute (NULL: kept for ever): the TTL of unpublished evidence, fixed
-- once more at promotion; reads never move it. Deleting a board sets it to
-- 0 and the sweeper removes the rows.
CREATE TABLE evidence (
	board          text COLLATE "C" NOT NULL,
	player         text COLLATE "C" NOT NULL,
	seq            bigint NOT NULL,
	content_sha256 text COLLATE "C" NOT NULL,
	created_ms     bigint NOT NULL,
	expires_ms     bigint,
	promoted_ms    bigint,
	PRIMARY KEY (board, player, seq)
);
-- The sweep reads the oldest expiries first.
CREATE INDEX evidence_expires ON evidence (expires_ms) WHERE expires_ms IS NOT NULL;
-- bytea rather than a large object: measured in docs/ARCHITECTURE.md
-- ("Evidence uploads"). The bytes are gzip already: no TOAST compression.
ALTER TABLE evidence_content ALTER COLUMN data SET STORAGE EXTERNAL;
