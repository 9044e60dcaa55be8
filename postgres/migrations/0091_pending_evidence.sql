-- 0091_pending_evidence: evidence of held submissions (issue 9, sections
-- 4 and 5). No new table: evidence uploaded for a pending review item is
-- an evidence row under the item's pending seq (the 64 bits of its id
-- with the top bit set, negative as bigint, so never a log seq); its
-- approval moves it to the log row it writes, in the same transaction.
--
-- podium_evidence_follow moves the evidence of approved items
-- ([{b, p, f, t, n, e}]: board, player, the pending seq, the approved
-- seq, the approval's time and the promoted expiry, null for ever). An
-- expired attachment in the way (a board deleted and made again restarts
-- its seqs) goes first, releasing its content; an unexpired one would be
-- left alone, and the item's evidence then stays under its pending seq.
CREATE FUNCTION podium_evidence_follow(p_doc jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	d record;
	r record;
BEGIN
	FOR d IN SELECT * FROM jsonb_to_recordset(p_doc) AS x(b text, p text, f bigint, t bigint, n bigint, e bigint) LOOP
		FOR r IN DELETE FROM evidence WHERE board = d.b AND player = d.p AND seq = d.t
				AND expires_ms IS NOT NULL AND expires_ms <= d.n RETURNING player, content_sha256 LOOP
			UPDATE evidence_content SET refs = refs - 1 WHERE player = r.player AND content_sha256 = r.content_sha256;
			DELETE FROM evidence_content WHERE player = r.player AND content_sha256 = r.content_sha256 AND refs <= 0;
		END LOOP;
		UPDATE evidence SET seq = d.t, promoted_ms = d.n, expires_ms = d.e
			WHERE board = d.b AND player = d.p AND seq = d.f AND (expires_ms IS NULL OR expires_ms > d.n)
			AND NOT EXISTS (SELECT 1 FROM evidence WHERE board = d.b AND player = d.p AND seq = d.t);
	END LOOP;
END
$$;
