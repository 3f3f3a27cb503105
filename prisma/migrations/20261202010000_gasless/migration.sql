-- Gasless payment (API.md "Gasless payment"): a buyer's signed EIP-3009 transferWithAuthorization to a
-- charge's clone, kept from the moment it is accepted until its relayer transaction ends. One may be
-- on its way per charge; one row per signed nonce, so the same authorization is relayed once.
CREATE TYPE "ChargeAuthorizationStatus" AS ENUM ('RELAYING', 'SENT', 'MINED', 'FAILED');

CREATE TABLE "charge_authorizations" (
    "id" TEXT NOT NULL,
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "from_address" TEXT NOT NULL,
    "value" DECIMAL(78,0) NOT NULL,
    "valid_after" DECIMAL(78,0) NOT NULL,
    "valid_before" DECIMAL(78,0) NOT NULL,
    "nonce" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "status" "ChargeAuthorizationStatus" NOT NULL DEFAULT 'RELAYING',
    "tx_id" TEXT,
    "gas_estimate" BIGINT NOT NULL,
    "gas_used" BIGINT,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "charge_authorizations_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "charge_authorizations_pending_key" ON "charge_authorizations"("charge_id") WHERE "status" IN ('RELAYING', 'SENT');
-- One on its way per payer too: each is checked against the payer's balance alone, so two at once
-- could spend the same USDC twice and the second would revert on the relayer's gas.
CREATE UNIQUE INDEX "charge_authorizations_payer_pending_key" ON "charge_authorizations"("chain_id", "from_address") WHERE "status" IN ('RELAYING', 'SENT');
CREATE UNIQUE INDEX "charge_authorizations_chain_id_from_address_nonce_key" ON "charge_authorizations"("chain_id", "from_address", "nonce");
-- The day's gas per chain (the budget), and the worker's queue.
CREATE INDEX "charge_authorizations_chain_id_created_at_idx" ON "charge_authorizations"("chain_id", "created_at");
CREATE INDEX "charge_authorizations_relaying_idx" ON "charge_authorizations"("chain_id") WHERE "status" = 'RELAYING';
CREATE INDEX "charge_authorizations_tx_id_idx" ON "charge_authorizations"("tx_id");
ALTER TABLE "charge_authorizations" ADD CONSTRAINT "charge_authorizations_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "charge_authorizations" ADD CONSTRAINT "charge_authorizations_tx_id_fkey" FOREIGN KEY ("tx_id") REFERENCES "relayer_transactions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
