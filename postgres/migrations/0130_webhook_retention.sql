-- 0130_webhook_retention: the indexes of the webhooks' prune, as
-- sqlite/migrations/0130_webhook_retention.sql describes them.
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (status, updated_ms);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event);
