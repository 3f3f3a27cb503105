-- Money from the chain, not from our own transactions. Every Flushed event of a clone is a
-- settlement (recorded, confirmed and rolled back like a payment), whoever sent it. Money the chain
-- moved is any uint256, so those amounts become numeric(78,0). Deployments and flushes share one
-- table of relayer transactions (deployments go out in batches). Charges gain the payout state (a
-- token that refuses, flushes that keep failing), their confirmed settlements and the expiry
-- extensions partial payments earned, and each chain gains the last seen balance of its relayer.

-- CreateEnum
CREATE TYPE "RelayerTxKind" AS ENUM ('DEPLOY', 'FLUSH');

-- Flushes become relayer transactions of either kind.
ALTER TYPE "FlushStatus" RENAME TO "RelayerTxStatus";
ALTER TABLE "flushes" RENAME TO "relayer_transactions";
ALTER TABLE "relayer_transactions" RENAME CONSTRAINT "flushes_pkey" TO "relayer_transactions_pkey";
ALTER INDEX "flushes_chain_id_status_idx" RENAME TO "relayer_transactions_chain_id_status_idx";
ALTER TABLE "relayer_transactions" ADD COLUMN "kind" "RelayerTxKind" NOT NULL DEFAULT 'FLUSH';
ALTER TABLE "relayer_transactions" ALTER COLUMN "kind" DROP DEFAULT;

-- Deployments point at their batch transaction instead of holding one each. A deployment that was
-- in flight is queued again: the batch skips a clone that exists by then.
UPDATE "clone_deployments" SET "status" = 'PENDING', "next_attempt_at" = now() WHERE "status" = 'SENT';
ALTER TABLE "clone_deployments" DROP COLUMN "raw_tx",
DROP COLUMN "tx_hash",
DROP COLUMN "sent_at",
ADD COLUMN     "tx_id" TEXT;

-- Money the chain moved: numeric(78,0) holds any uint256.
ALTER TABLE "charges" ALTER COLUMN "amount_received" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "fee_amount" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "net_amount" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "settled_amount" SET DATA TYPE DECIMAL(78,0),
ADD COLUMN     "settlements" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "flush_failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "payout_blocked_reason" TEXT,
ADD COLUMN     "payout_blocked_at" TIMESTAMPTZ(3),
ADD COLUMN     "expiry_extended_minutes" INTEGER NOT NULL DEFAULT 0;

ALTER TABLE "payments" ALTER COLUMN "amount" SET DATA TYPE DECIMAL(78,0);

-- CreateTable
CREATE TABLE "settlements" (
    "id" TEXT NOT NULL,
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "net_amount" DECIMAL(78,0) NOT NULL,
    "fee_amount" DECIMAL(78,0) NOT NULL,
    "status" "PaymentStatus" NOT NULL DEFAULT 'SEEN',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "confirmed_at" TIMESTAMPTZ(3),

    CONSTRAINT "settlements_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chain_status" (
    "chain_id" INTEGER NOT NULL,
    "relayer_address" TEXT NOT NULL,
    "relayer_balance" DECIMAL(78,0) NOT NULL,
    "relayer_min_balance" DECIMAL(78,0) NOT NULL,
    "checked_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "chain_status_pkey" PRIMARY KEY ("chain_id")
);

-- Our earlier confirmed flushes are settlements too: what they paid is what the charges count as
-- settled amount, which stays as it is. Their list on the charge starts with the flush we applied.
UPDATE "charges" c SET "settlements" = jsonb_build_array(jsonb_build_object(
    'txHash', c."flush_tx_hash", 'logIndex', NULL, 'blockNumber', t."block_number",
    'netAmount', c."net_amount"::text, 'feeAmount', c."fee_amount"::text, 'confirmedAt', t."updated_at"))
FROM "relayer_transactions" t
WHERE t."tx_hash" = c."flush_tx_hash" AND c."flush_tx_hash" IS NOT NULL AND t."status" = 'CONFIRMED';

-- CreateIndex
CREATE INDEX "settlements_charge_id_idx" ON "settlements"("charge_id");

-- CreateIndex
CREATE UNIQUE INDEX "settlements_chain_id_tx_hash_log_index_key" ON "settlements"("chain_id", "tx_hash", "log_index");

-- CreateIndex
CREATE INDEX "clone_deployments_tx_id_idx" ON "clone_deployments"("tx_id");

-- AddForeignKey
ALTER TABLE "clone_deployments" ADD CONSTRAINT "clone_deployments_tx_id_fkey" FOREIGN KEY ("tx_id") REFERENCES "relayer_transactions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateIndex (partial): the confirmer reads only settlements still waiting for confirmations.
CREATE INDEX "settlements_seen_idx" ON "settlements"("chain_id", "block_number") WHERE "status" = 'SEEN';

-- CreateIndex (partial): /metrics counts blocked payouts without reading every charge.
CREATE INDEX "charges_payout_blocked_idx" ON "charges"("chain_id") WHERE "payout_blocked_reason" IS NOT NULL;
