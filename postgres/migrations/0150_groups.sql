-- 0150_groups: group memberships (issue 21, part 2); the same table as
-- SQLite's 0150. Changes are written under the set board's head lock (a
-- membership change and the set's other writers take turns), so n is
-- dense and in commit order.
CREATE TABLE group_changes (
	set_board text COLLATE "C" NOT NULL,
	n         bigint NOT NULL,
	grp       text COLLATE "C" NOT NULL,
	player    text COLLATE "C" NOT NULL,
	joined    boolean NOT NULL,
	at_ms     bigint NOT NULL,
	PRIMARY KEY (set_board, n)
);
