-- 0130_webhook_retention: the indexes of the webhooks' prune
-- (webhooks.Config.Retention): ended deliveries by age, and the
-- deliveries of an event, so that an event no delivery refers to is found
-- without a scan.
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (status, updated_ms);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event);
