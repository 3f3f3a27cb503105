-- Agent payments (x402). Each merchant's x402 address per mode, wallet and fee is a charges row of
-- kind 'x402' (the address's money goes through the ledger and the payouts like a charge's); every
-- other row is a charge. The previous release reads the column's default for the rows it writes.
ALTER TABLE "charges" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'charge';

-- The payments handed to the facilitator's settle, relayed with the service's gas.
CREATE TYPE "X402PaymentStatus" AS ENUM ('RELAYING', 'SENT', 'SETTLED', 'FAILED');

CREATE TABLE "x402_payments" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "value" DECIMAL(78,0) NOT NULL,
    "valid_after" DECIMAL(78,0) NOT NULL,
    "valid_before" DECIMAL(78,0) NOT NULL,
    "nonce" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "resource" TEXT,
    "description" TEXT,
    "status" "X402PaymentStatus" NOT NULL DEFAULT 'RELAYING',
    "tx_id" TEXT,
    "tx_hash" TEXT,
    "gas_estimate" BIGINT,
    "gas_used" BIGINT,
    "error" TEXT,
    "answered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "x402_payments_pkey" PRIMARY KEY ("id")
);
-- A signed nonce is settled once: a replay is refused before any gas is spent.
CREATE UNIQUE INDEX "x402_payments_chain_id_from_address_nonce_key" ON "x402_payments"("chain_id", "from_address", "nonce");
CREATE INDEX "x402_payments_merchant_id_livemode_created_at_id_idx" ON "x402_payments"("merchant_id", "livemode", "created_at" DESC, "id" DESC);
-- The merchant's relayer gas for the day, summed under the chain's budget lock.
CREATE INDEX "x402_payments_merchant_id_chain_id_created_at_idx" ON "x402_payments"("merchant_id", "chain_id", "created_at");
CREATE INDEX "x402_payments_tx_id_idx" ON "x402_payments"("tx_id");
CREATE INDEX "x402_payments_chain_id_tx_hash_idx" ON "x402_payments"("chain_id", "tx_hash");
-- The worker's queue: what waits to be sent on each chain.
CREATE INDEX "x402_payments_relaying_idx" ON "x402_payments"("chain_id") WHERE "status" = 'RELAYING';
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_tx_id_fkey" FOREIGN KEY ("tx_id") REFERENCES "relayer_transactions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- The settlement a ledger payment of an x402 address records (null for every other row): the ledger
-- shows what was paid for and by whom. NOT VALID: the rows written from now on are checked, and the
-- existing ones (all null) are not scanned while the ledger's writes wait (a later release may
-- VALIDATE it). RESTRICT: ledger rows are immutable, nothing may null it.
ALTER TABLE "balance_transactions" ADD COLUMN "x402_payment_id" TEXT;
ALTER TABLE "balance_transactions" ADD CONSTRAINT "balance_transactions_x402_payment_id_fkey" FOREIGN KEY ("x402_payment_id") REFERENCES "x402_payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE NOT VALID;
