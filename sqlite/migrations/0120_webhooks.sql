-- 0120_webhooks: the webhooks module's rows (package webhooks).
-- webhook_endpoints: where events go; types is a JSON array of event types,
-- prefix limits an endpoint to boards whose id starts with it, secret signs
-- deliveries (prev_secret too until prev_until_ms, a rotation's grace).
CREATE TABLE webhook_endpoints (
	id            TEXT    NOT NULL PRIMARY KEY,
	url           TEXT    NOT NULL,
	types         TEXT    NOT NULL,
	prefix        TEXT    NOT NULL,
	secret        TEXT    NOT NULL,
	prev_secret   TEXT    NOT NULL,
	prev_until_ms INTEGER NOT NULL,
	disabled      INTEGER NOT NULL,
	created_ms    INTEGER NOT NULL,
	updated_ms    INTEGER NOT NULL
) STRICT;

-- webhook_events: the outbox, written in the transaction of the change
-- that caused each event. id is derived from that change (the same on
-- every node), so storing it twice keeps one; seq orders the outbox.
CREATE TABLE webhook_events (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	id      TEXT    NOT NULL UNIQUE,
	type    TEXT    NOT NULL,
	board   TEXT    NOT NULL,
	at_ms   INTEGER NOT NULL,
	payload TEXT    NOT NULL
) STRICT;

CREATE INDEX webhook_events_at ON webhook_events (at_ms);

-- webhook_deliveries: one per event and endpoint that subscribed to it when
-- it was stored; seq is the event's. status is pending, delivered or
-- failed; born_ms starts the retry window, next_ms is the next attempt.
CREATE TABLE webhook_deliveries (
	endpoint    TEXT    NOT NULL,
	event       TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	status      TEXT    NOT NULL,
	attempts    INTEGER NOT NULL,
	born_ms     INTEGER NOT NULL,
	next_ms     INTEGER NOT NULL,
	last_error  TEXT    NOT NULL,
	last_status INTEGER NOT NULL,
	latency_ms  INTEGER NOT NULL,
	updated_ms  INTEGER NOT NULL,
	PRIMARY KEY (endpoint, event)
) STRICT, WITHOUT ROWID;

CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint, status, seq);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint, seq);
