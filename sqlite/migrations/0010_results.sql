-- 0010_results: the kept results of a best_k board's entries, best first,
-- as a JSON array of {"keys":[...],"at":ms,"seq":n} (podium.EncodeResults);
-- NULL on boards of other modes. The entry's rec still holds what ranks it
-- (the best result), so loading a board of another mode reads one NULL more.
ALTER TABLE entries ADD COLUMN results TEXT;
