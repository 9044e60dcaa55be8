-- 0003_instance: the identity of the podium instance that owns this
-- database. The data directory keeps the same id in a file; podium refuses
-- to start when the two disagree, or when the directory has an id and the
-- database has none (the database was lost, emptied or replaced). One row at
-- most; a backup carries its source's id.
CREATE TABLE instance (
	one        INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
	id         TEXT    NOT NULL,
	created_ms INTEGER NOT NULL
) STRICT;
