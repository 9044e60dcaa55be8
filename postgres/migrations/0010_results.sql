-- 0010_results: the kept results of a best_k board's entries, best first,
-- as a JSON array of {"keys":[...],"at":ms,"seq":n} (podium.EncodeResults);
-- NULL on boards of other modes. The key columns still hold what ranks the
-- entry (the best result). Adding a nullable column without a default
-- rewrites nothing.
ALTER TABLE entries ADD COLUMN results text;
