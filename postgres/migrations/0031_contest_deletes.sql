-- 0031_contest_deletes: as in the SQLite store. The audit log records
-- refused attempts too, and whether the judge said the flag was right.
ALTER TABLE contest_attempts ADD COLUMN correct boolean NOT NULL DEFAULT false;
UPDATE contest_attempts SET correct = true WHERE result = 'solved';
