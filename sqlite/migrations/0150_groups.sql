-- 0150_groups: group memberships (issue 21, part 2). A group set is a
-- board (its document holds the caps); this table is its log of joins and
-- leaves, numbered n from 1 per set in commit order. The current members
-- are replayed from it; the times of every join and leave stay.
CREATE TABLE group_changes (
	set_board TEXT    NOT NULL,
	n         INTEGER NOT NULL,
	grp       TEXT    NOT NULL,
	player    TEXT    NOT NULL,
	joined    INTEGER NOT NULL, -- 1: a join, 0: a leave
	at_ms     INTEGER NOT NULL,
	PRIMARY KEY (set_board, n)
) STRICT, WITHOUT ROWID;
