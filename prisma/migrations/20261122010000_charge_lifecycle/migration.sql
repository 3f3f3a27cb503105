-- Charge lifecycle: orderId uniqueness, order lookups, list filters and the expiry sweep.

-- An orderId names one open charge per merchant and mode. Once that charge is EXPIRED or
-- CANCELLED the order may be charged again. The database decides, so concurrent creates cannot both win.
CREATE UNIQUE INDEX "charges_open_order_id_key" ON "charges" ("merchant_id", "livemode", "order_id")
    WHERE "status" NOT IN ('EXPIRED', 'CANCELLED');

-- The expiry sweep reads only PENDING charges that are due, never the whole table.
CREATE INDEX "charges_pending_expires_at_idx" ON "charges" ("expires_at") WHERE "status" = 'PENDING';

-- GET /v1/charges/order/:orderId (newest first) and the list filters.
CREATE INDEX "charges_merchant_id_livemode_order_id_created_at_idx" ON "charges" ("merchant_id", "livemode", "order_id", "created_at" DESC);
CREATE INDEX "charges_merchant_id_livemode_status_created_at_id_idx" ON "charges" ("merchant_id", "livemode", "status", "created_at" DESC, "id" DESC);
DROP INDEX "charges_customer_id_idx";
CREATE INDEX "charges_customer_id_created_at_id_idx" ON "charges" ("customer_id", "created_at" DESC, "id" DESC);
