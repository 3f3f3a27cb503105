-- A refund may be paid by an EIP-3009 authorization the merchant's wallet signed: stored here by the
-- API, then checked again and relayed by the worker that holds the chain's relayer (a relayer
-- transaction of its own kind). An authorization that cannot be relayed keeps why, and may be
-- replaced by another.
ALTER TYPE "RelayerTxKind" ADD VALUE 'AUTHORIZATION';
ALTER TABLE "refunds" ADD COLUMN "authorization" JSONB;
ALTER TABLE "refunds" ADD COLUMN "authorization_tx_id" TEXT;
ALTER TABLE "refunds" ADD COLUMN "authorization_error" TEXT;
