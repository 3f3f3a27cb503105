-- stablegate: no-transaction
-- One invoice per subscription period; built without blocking the previous release's invoice writes.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "invoices_subscription_period_key" ON "invoices"("subscription_id", "period_index") WHERE "subscription_id" IS NOT NULL;
