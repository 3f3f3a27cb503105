-- Relayer cost bounded per merchant (issue 41, point 3). A sweep keeps the gas it was sent with
-- (gas_needed: counted against its merchant's day until its receipt's gas_used is known) and, when
-- it moved nothing, the clone's balance of the token it saw (balance_seen): the same sweep is not
-- tried again until that balance changes. Refusals of the daily budget are counted per merchant,
-- chain, kind and UTC day for /metrics. Nullable columns and a new table: the previous release
-- neither reads nor writes them.
ALTER TABLE "sweeps" ADD COLUMN "gas_needed" BIGINT;
ALTER TABLE "sweeps" ADD COLUMN "gas_used" BIGINT;
ALTER TABLE "sweeps" ADD COLUMN "balance_seen" DECIMAL(78, 0);

CREATE TABLE "relayer_budget_refusals" (
    "merchant_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "relayer_budget_refusals_pkey" PRIMARY KEY ("merchant_id", "chain_id", "kind", "day")
);
ALTER TABLE "relayer_budget_refusals" ADD CONSTRAINT "relayer_budget_refusals_merchant_id_fkey"
    FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
