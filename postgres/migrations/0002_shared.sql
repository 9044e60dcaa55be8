-- 0002_shared: what several podium nodes on one database need (shared
-- mode): a generation per board, a head row for every board, and the
-- change feed of board, player and key changes.

-- A board's generation tells it from an earlier board with the same id
-- (deleted and made again) and from its own earlier definition when its
-- keys, mode or reset changed: whenever a node's in-memory state built
-- under the old definition cannot be kept. It lives in the head row, the
-- row writers lock, so a writer reads it with the head. ADD COLUMN with a
-- volatile default gives every existing row a value of its own.
CREATE SEQUENCE board_gen;
ALTER TABLE board_heads ADD COLUMN gen bigint NOT NULL DEFAULT nextval('board_gen');

-- Every board has a head row from its creation to its deletion (a writer
-- of a board locks it); until now it appeared with the board's first log
-- row.
INSERT INTO board_heads (board, seq) SELECT id, 0 FROM boards ON CONFLICT (board) DO NOTHING;

-- changes: the change feed. Every change of a board, player or API key
-- appends a row in the transaction that makes the change; nodes read the
-- feed after the last id they applied and reload the objects it names.
-- at is the server's clock when the row was written, for pruning.
CREATE TABLE changes (
	id   bigint PRIMARY KEY,
	kind text COLLATE "C" NOT NULL CHECK (kind IN ('board', 'player', 'key')),
	key  text COLLATE "C" NOT NULL,
	at   timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- change_lock: one row that serialises the writers of the change feed and
-- numbers its rows. A writer takes the next id by updating last, which
-- locks the row until its transaction ends; so ids become visible in id
-- order (a reader that has seen id N never later sees a new id below N),
-- and a rolled-back change leaves no gap. pruned is the highest id
-- deleted by pruning: a reader whose position is below it missed changes.
CREATE TABLE change_lock (
	one    boolean PRIMARY KEY DEFAULT true CHECK (one),
	last   bigint NOT NULL,
	pruned bigint NOT NULL
);
INSERT INTO change_lock (last, pruned) VALUES (0, 0);
