-- 0120_webhooks: the webhooks module's rows, as
-- sqlite/migrations/0120_webhooks.sql describes them. types is a JSON
-- array as text; seq comes from an identity (the outbox's order).
CREATE TABLE webhook_endpoints (
	id            text COLLATE "C" NOT NULL PRIMARY KEY,
	url           text   NOT NULL,
	types         text   NOT NULL,
	prefix        text COLLATE "C" NOT NULL,
	secret        text   NOT NULL,
	prev_secret   text   NOT NULL,
	prev_until_ms bigint NOT NULL,
	disabled      bigint NOT NULL,
	created_ms    bigint NOT NULL,
	updated_ms    bigint NOT NULL
);

CREATE TABLE webhook_events (
	seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id      text COLLATE "C" NOT NULL UNIQUE,
	type    text COLLATE "C" NOT NULL,
	board   text COLLATE "C" NOT NULL,
	at_ms   bigint NOT NULL,
	payload text   NOT NULL
);

CREATE INDEX webhook_events_at ON webhook_events (at_ms);

CREATE TABLE webhook_deliveries (
	endpoint    text COLLATE "C" NOT NULL,
	event       text COLLATE "C" NOT NULL,
	seq         bigint NOT NULL,
	status      text COLLATE "C" NOT NULL,
	attempts    bigint NOT NULL,
	born_ms     bigint NOT NULL,
	next_ms     bigint NOT NULL,
	last_error  text   NOT NULL,
	last_status bigint NOT NULL,
	latency_ms  bigint NOT NULL,
	updated_ms  bigint NOT NULL,
	PRIMARY KEY (endpoint, event)
);

CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint, status, seq);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint, seq);
