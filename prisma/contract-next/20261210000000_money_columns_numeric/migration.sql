-- contract: 0.2.0 reads these six amounts as int8 or numeric alike (toUnits, and raw charge reads cast to numeric), so the release before this one no longer needs them int8.
-- One money column type: the last int8 amounts become numeric(78,0), like every other amount (any uint256
-- the chain can move). Each ALTER rewrites its table under an ACCESS EXCLUSIVE lock (and rebuilds
-- charges_amount_idx): writes to these tables wait while it runs.
ALTER TABLE "charges" ALTER COLUMN "amount" SET DATA TYPE NUMERIC(78,0);
ALTER TABLE "invoices" ALTER COLUMN "total" SET DATA TYPE NUMERIC(78,0);
ALTER TABLE "payment_links" ALTER COLUMN "amount" SET DATA TYPE NUMERIC(78,0);
ALTER TABLE "plans" ALTER COLUMN "amount" SET DATA TYPE NUMERIC(78,0);
ALTER TABLE "subscriptions" ALTER COLUMN "amount" SET DATA TYPE NUMERIC(78,0);
ALTER TABLE "subscription_pulls" ALTER COLUMN "amount" SET DATA TYPE NUMERIC(78,0);
