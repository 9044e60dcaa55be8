-- 0002_watermarks: the entries table is written behind the log. A board's
-- watermark is the seq up to which its entries reflect the submissions
-- log; on start-up podium loads the entries and replays the log after the
-- watermark.
CREATE TABLE watermarks (
	board TEXT    NOT NULL PRIMARY KEY,
	seq   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
