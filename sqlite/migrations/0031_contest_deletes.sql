-- 0031_contest_deletes: the audit log records refused attempts too (a
-- second solve, an unknown challenge, outside the contest's time), and
-- whether the judge said the flag was right, so that a retry with the
-- same Idempotency-Key is recognised and answered with the same refusal.
ALTER TABLE contest_attempts ADD COLUMN correct INTEGER NOT NULL DEFAULT 0;
UPDATE contest_attempts SET correct = 1 WHERE result = 'solved';
