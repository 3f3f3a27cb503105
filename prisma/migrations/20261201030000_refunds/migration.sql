-- Refunds (API.md "Refunds"): money the merchant's settlement wallet sends back to a buyer, which the
-- service prepares and follows on chain but never holds. The transfer that completes a refund is
-- recorded on it (seen, then confirmed); a transfer completes one refund at most.
CREATE TYPE "RefundStatus" AS ENUM ('AWAITING_ADDRESS', 'AWAITING_PAYMENT', 'COMPLETED', 'CANCELLED');

CREATE TABLE "refunds" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "charge_id" TEXT NOT NULL,
    "amount" DECIMAL(78,0) NOT NULL,
    "reason" TEXT,
    "status" "RefundStatus" NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "from_address" TEXT NOT NULL,
    "address" TEXT,
    "claim_token" TEXT,
    "after_block" BIGINT NOT NULL,
    "tx_hash" TEXT,
    "log_index" INTEGER,
    "block_number" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "refunds_merchant_id_livemode_created_at_id_idx" ON "refunds"("merchant_id", "livemode", "created_at" DESC, "id" DESC);
CREATE INDEX "refunds_charge_id_idx" ON "refunds"("charge_id");
-- The indexer's question, every range: which refunds on this chain wait for their transfer?
CREATE INDEX "refunds_awaiting_payment_idx" ON "refunds"("chain_id") WHERE "status" = 'AWAITING_PAYMENT';
-- One transfer completes one refund.
CREATE UNIQUE INDEX "refunds_transfer_key" ON "refunds"("chain_id", "tx_hash", "log_index") WHERE "tx_hash" IS NOT NULL;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Completed refunds of a charge, kept on it like its other amounts.
ALTER TABLE "charges" ADD COLUMN "amount_refunded" DECIMAL(78,0) NOT NULL DEFAULT 0;
