-- 0090_review: moderation (issue 9, section 5). review_items holds the
-- submissions a board's review setting or a player's freeze held: not in
-- the log, so not ranked, until a moderator approves one (the approval
-- logs it as a new submission, seq names that row) or rejects it. Times
-- are unix ms.
CREATE TABLE review_items (
	id           text COLLATE "C" PRIMARY KEY,
	board        text COLLATE "C" NOT NULL,
	period       text COLLATE "C" NOT NULL,
	player       text COLLATE "C" NOT NULL,
	keys         bigint[] NOT NULL,
	meta         text,
	submitted_ms bigint NOT NULL,
	reason       text NOT NULL,
	status       text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
	decided_ms   bigint,
	decided_by   text NOT NULL DEFAULT '',
	note         text NOT NULL DEFAULT '',
	seq          bigint
);
-- The queue is read in (submitted, id) order, by state, board or player.
CREATE INDEX review_items_status ON review_items (status, submitted_ms, id);
CREATE INDEX review_items_board ON review_items (board, submitted_ms, id);
CREATE INDEX review_items_player ON review_items (player, submitted_ms, id);
-- A history row finds the approval that wrote it.
CREATE INDEX review_items_seq ON review_items (board, seq) WHERE seq IS NOT NULL;

-- podium_review_decide decides pending items ([{id, s, t, b, n, q}]: the
-- status, time, decider, note and approved seq) and fails the transaction
-- with P0005 when one is not pending: a decision is taken once, whatever
-- two nodes race.
CREATE FUNCTION podium_review_decide(p_doc jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	d record;
BEGIN
	FOR d IN SELECT * FROM jsonb_to_recordset(p_doc) AS x(id text, s text, t bigint, b text, n text, q bigint) LOOP
		UPDATE review_items SET status = d.s, decided_ms = d.t, decided_by = d.b, note = d.n, seq = NULLIF(d.q, 0)
			WHERE id = d.id AND status = 'pending';
		IF NOT FOUND THEN
			RAISE EXCEPTION 'podium: review item % was already decided', d.id USING ERRCODE = 'P0005';
		END IF;
	END LOOP;
END
$$;

-- frozen_players: players whose new submissions are all held. A freeze
-- travels on the change feed as a 'player' change.
CREATE TABLE frozen_players (
	player    text COLLATE "C" PRIMARY KEY,
	frozen_by text NOT NULL,
	reason    text NOT NULL,
	at_ms     bigint NOT NULL
);

-- A player's history is read from the log through submissions_player
-- (0070: board, period, player, then seq), one range per period. An index
-- on (board, player, seq) of its own made a group commit about 1.5x
-- slower (BenchmarkSubmitFeed, SQLite) for a read that is rare.
