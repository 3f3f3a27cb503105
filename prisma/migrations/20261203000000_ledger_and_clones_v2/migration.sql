-- One ledger of money, derived from the chain (API.md "Ledger"), and the charge contracts of version 2
-- (API.md "Clone contracts v2"). What the chain did is recorded once per fact in chain_transfers (the
-- observations: seen, confirmed, or reversed by a deep reorg); each confirmed one is an immutable row of
-- balance_transactions (the ledger); every money field of a charge, a clone and an invoice is a sum of
-- ledger rows. Clones are per charge and chain, deployed by the payout that first needs them, so
-- clone_deployments goes; EIP-3009 authorizations of refunds and of payments share one table.

-- The kinds of relayer transaction added (not used in this transaction, as Postgres requires).
ALTER TYPE "RelayerTxKind" ADD VALUE 'SWEEP';
ALTER TYPE "RelayerTxKind" ADD VALUE 'FILL';

-- Charges: their contract version, where they are paid, and whether they need review.
ALTER TABLE "charges" ADD COLUMN "contract_version" INTEGER NOT NULL DEFAULT 2;
ALTER TABLE "charges" ADD COLUMN "deposit_address" TEXT;
ALTER TABLE "charges" ADD COLUMN "review_reason" TEXT;
ALTER TABLE "charges" ADD COLUMN "review_at" TIMESTAMPTZ(3);
ALTER TABLE "charges" ADD COLUMN "reviewed_reason" TEXT;
ALTER TABLE "charges" ADD COLUMN "stray_assets" JSONB NOT NULL DEFAULT '[]';
-- A charge that picked a chain has a version 1 clone there; one that has not gets version 2 (its
-- address is computed when the chain is picked: it could not be computed here).
UPDATE "charges" SET "contract_version" = 1, "deposit_address" = "clone_address" WHERE "clone_address" IS NOT NULL;
CREATE UNIQUE INDEX "charges_deposit_address_key" ON "charges"("deposit_address") WHERE "deposit_address" IS NOT NULL;
CREATE INDEX "charges_review_idx" ON "charges"("merchant_id", "livemode") WHERE "review_reason" IS NOT NULL;

-- Clones: a charge's address on one chain and its payouts.
CREATE TABLE "clones" (
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "held" DECIMAL(78,0) NOT NULL DEFAULT 0,
    "deployed_at" TIMESTAMPTZ(3),
    "flush_id" TEXT,
    "flush_retry_at" TIMESTAMPTZ(3),
    "flush_failures" INTEGER NOT NULL DEFAULT 0,
    "payout_blocked_reason" TEXT,
    "payout_blocked_at" TIMESTAMPTZ(3),
    "balance_checked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "clones_pkey" PRIMARY KEY ("charge_id", "chain_id")
);
CREATE INDEX "clones_flush_id_idx" ON "clones"("flush_id");
-- The payout queue: clones holding confirmed money; and the clones just picked, compared with the chain first.
CREATE INDEX "clones_holding_idx" ON "clones"("chain_id") WHERE "held" > 0;
CREATE INDEX "clones_unchecked_idx" ON "clones"("chain_id") WHERE "balance_checked_at" IS NULL;
ALTER TABLE "clones" ADD CONSTRAINT "clones_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "clones" ADD CONSTRAINT "clones_flush_id_fkey" FOREIGN KEY ("flush_id") REFERENCES "relayer_transactions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
INSERT INTO "clones" ("charge_id", "chain_id", "address", "version", "deployed_at", "flush_id", "flush_retry_at", "flush_failures",
                      "payout_blocked_reason", "payout_blocked_at", "created_at", "updated_at")
SELECT "id", "chain_id", "clone_address", 1, "deployed_at", "flush_id", "flush_retry_at", "flush_failures",
       "payout_blocked_reason", "payout_blocked_at", "created_at", "updated_at"
FROM "charges" WHERE "clone_address" IS NOT NULL;
UPDATE "clones" SET "balance_checked_at" = CURRENT_TIMESTAMP;

-- Chain transfers: the observations.
CREATE TYPE "TransferKind" AS ENUM ('PAYMENT', 'PAYOUT', 'FEE', 'REFUND');
CREATE TYPE "TransferStatus" AS ENUM ('SEEN', 'CONFIRMED', 'REVERSED');
CREATE TABLE "chain_transfers" (
    "id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "block_time" TIMESTAMPTZ(3),
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "amount" DECIMAL(78,0) NOT NULL,
    "fact_key" TEXT NOT NULL,
    "kind" "TransferKind" NOT NULL,
    "charge_id" TEXT NOT NULL,
    "refund_id" TEXT,
    "status" "TransferStatus" NOT NULL DEFAULT 'SEEN',
    "late" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "confirmed_at" TIMESTAMPTZ(3),
    "reversed_at" TIMESTAMPTZ(3),
    CONSTRAINT "chain_transfers_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "chain_transfers_charge_id_idx" ON "chain_transfers"("charge_id");
CREATE INDEX "chain_transfers_refund_id_idx" ON "chain_transfers"("refund_id");
CREATE INDEX "chain_transfers_chain_id_tx_hash_idx" ON "chain_transfers"("chain_id", "tx_hash");
-- A fact is recorded once per kind while it stands (a transfer between two charges' addresses is a payout of
-- one and a payment of the other); a reversed one may be seen again when the chain re-includes it.
CREATE UNIQUE INDEX "chain_transfers_fact_key" ON "chain_transfers"("chain_id", "kind", "fact_key") WHERE "status" <> 'REVERSED';
CREATE INDEX "chain_transfers_seen_idx" ON "chain_transfers"("chain_id", "block_number") WHERE "status" = 'SEEN';
CREATE INDEX "chain_transfers_confirmed_block_idx" ON "chain_transfers"("chain_id", "block_number") WHERE "status" = 'CONFIRMED';
ALTER TABLE "chain_transfers" ADD CONSTRAINT "chain_transfers_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "chain_transfers" ADD CONSTRAINT "chain_transfers_refund_id_fkey" FOREIGN KEY ("refund_id") REFERENCES "refunds"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Payments become PAYMENT transfers: the fact key (domain/chain-transfers.ts) is the transaction, the
-- parties and the amount, and the place among identical transfers of that transaction.
INSERT INTO "chain_transfers" ("id", "chain_id", "tx_hash", "log_index", "block_number", "block_hash", "from_address", "to_address", "amount",
                               "fact_key", "kind", "charge_id", "status", "late", "created_at", "confirmed_at")
SELECT p."id", p."chain_id", p."tx_hash", p."log_index", p."block_number", p."block_hash", p."from_address", c."clone_address", p."amount",
       lower(p."tx_hash") || ':' || lower(p."from_address") || ':' || lower(c."clone_address") || ':' || p."amount"::text || ':' ||
         (row_number() OVER (PARTITION BY p."chain_id", p."tx_hash", p."from_address", c."clone_address", p."amount" ORDER BY p."log_index") - 1)::text,
       'PAYMENT', p."charge_id", p."status"::text::"TransferStatus", p."late", p."created_at", p."confirmed_at"
FROM "payments" p JOIN "charges" c ON c."id" = p."charge_id";

-- A settlement (one Flushed event) becomes its two transfers: the net to the wallet and the fee. The
-- fee recipient is not in the database: those fact keys name the settlement (deep history, never read again).
INSERT INTO "chain_transfers" ("id", "chain_id", "tx_hash", "log_index", "block_number", "block_hash", "from_address", "to_address", "amount",
                               "fact_key", "kind", "charge_id", "status", "created_at", "confirmed_at")
SELECT s."id" || '_net', s."chain_id", s."tx_hash", s."log_index", s."block_number", s."block_hash", c."clone_address", c."settlement_wallet", s."net_amount",
       lower(s."tx_hash") || ':' || lower(c."clone_address") || ':' || lower(c."settlement_wallet") || ':' || s."net_amount"::text || ':0',
       'PAYOUT', s."charge_id", s."status"::text::"TransferStatus", s."created_at", s."confirmed_at"
FROM "settlements" s JOIN "charges" c ON c."id" = s."charge_id" WHERE s."net_amount" > 0;
INSERT INTO "chain_transfers" ("id", "chain_id", "tx_hash", "log_index", "block_number", "block_hash", "from_address", "to_address", "amount",
                               "fact_key", "kind", "charge_id", "status", "created_at", "confirmed_at")
SELECT s."id" || '_fee', s."chain_id", s."tx_hash", s."log_index", s."block_number", s."block_hash", c."clone_address", '0x0000000000000000000000000000000000000000',
       s."fee_amount", 'settlement:' || s."id" || ':fee', 'FEE', s."charge_id", s."status"::text::"TransferStatus", s."created_at", s."confirmed_at"
FROM "settlements" s JOIN "charges" c ON c."id" = s."charge_id" WHERE s."fee_amount" > 0;

-- Payouts confirmed before chain_truth have no settlements row: chain_truth kept each only in its
-- charge's settlements (logIndex null). They become their PAYOUT and FEE transfers too.
INSERT INTO "chain_transfers" ("id", "chain_id", "tx_hash", "log_index", "block_number", "block_hash", "from_address", "to_address", "amount",
                               "fact_key", "kind", "charge_id", "status", "created_at", "confirmed_at")
SELECT 'xfer_' || substr(md5(c."id" || ':' || (e->>'txHash') || ':' || k."kind"), 1, 24), c."chain_id", e->>'txHash', 0, (e->>'blockNumber')::bigint,
       coalesce(t."block_hash", ''), c."clone_address", k."to", k."amount",
       CASE k."kind" WHEN 'PAYOUT' THEN lower(e->>'txHash') || ':' || lower(c."clone_address") || ':' || lower(c."settlement_wallet") || ':' || k."amount"::text || ':0'
                     ELSE 'flush:' || c."id" || ':' || lower(e->>'txHash') || ':fee' END,
       k."kind"::"TransferKind", c."id", 'CONFIRMED',
       coalesce((e->>'confirmedAt')::timestamptz, CURRENT_TIMESTAMP), coalesce((e->>'confirmedAt')::timestamptz, CURRENT_TIMESTAMP)
FROM "charges" c
CROSS JOIN LATERAL jsonb_array_elements(c."settlements") e
CROSS JOIN LATERAL (VALUES ('PAYOUT', c."settlement_wallet", (e->>'netAmount')::numeric),
                           ('FEE', '0x0000000000000000000000000000000000000000', (e->>'feeAmount')::numeric)) k("kind", "to", "amount")
LEFT JOIN "relayer_transactions" t ON t."chain_id" = c."chain_id" AND t."tx_hash" = e->>'txHash'
WHERE c."clone_address" IS NOT NULL AND k."amount" > 0
  AND NOT EXISTS (SELECT 1 FROM "settlements" s WHERE s."charge_id" = c."id" AND s."tx_hash" = e->>'txHash');

-- A refund's transfer, seen or confirmed, becomes a REFUND transfer.
INSERT INTO "chain_transfers" ("id", "chain_id", "tx_hash", "log_index", "block_number", "block_hash", "from_address", "to_address", "amount",
                               "fact_key", "kind", "charge_id", "refund_id", "status", "created_at", "confirmed_at")
SELECT 'xfer_' || substr(md5(r."id"), 1, 24), r."chain_id", r."tx_hash", r."log_index", r."block_number",
       coalesce((SELECT b."hash" FROM "chain_blocks" b WHERE b."chain_id" = r."chain_id" AND b."number" = r."block_number"), ''), r."from_address", r."address", r."amount",
       lower(r."tx_hash") || ':' || lower(r."from_address") || ':' || lower(r."address") || ':' || r."amount"::text || ':' ||
         (row_number() OVER (PARTITION BY r."chain_id", lower(r."tx_hash"), lower(r."from_address"), lower(r."address"), r."amount" ORDER BY r."log_index") - 1)::text,
       'REFUND', r."charge_id", r."id", CASE WHEN r."status" = 'COMPLETED' THEN 'CONFIRMED' ELSE 'SEEN' END::"TransferStatus", r."updated_at", r."completed_at"
FROM "refunds" r WHERE r."tx_hash" IS NOT NULL AND r."status" IN ('AWAITING_PAYMENT', 'COMPLETED');

-- The ledger.
CREATE TYPE "BalanceTransactionType" AS ENUM ('payment', 'fee', 'payout', 'refund', 'reversal');
CREATE TABLE "balance_transactions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "type" "BalanceTransactionType" NOT NULL,
    "amount" DECIMAL(78,0) NOT NULL,
    "charge_id" TEXT NOT NULL,
    "refund_id" TEXT,
    "invoice_id" TEXT,
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "block_number" BIGINT NOT NULL,
    "transfer_id" TEXT,
    "reverses_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "balance_transactions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "balance_transactions_reverses_id_key" ON "balance_transactions"("reverses_id");
CREATE UNIQUE INDEX "balance_transactions_transfer_key" ON "balance_transactions"("transfer_id") WHERE "type" <> 'reversal';
CREATE INDEX "balance_transactions_merchant_id_livemode_created_at_id_idx" ON "balance_transactions"("merchant_id", "livemode", "created_at" DESC, "id" DESC);
CREATE INDEX "balance_transactions_charge_id_idx" ON "balance_transactions"("charge_id");
CREATE INDEX "balance_transactions_refund_id_idx" ON "balance_transactions"("refund_id");
CREATE INDEX "balance_transactions_invoice_id_idx" ON "balance_transactions"("invoice_id");
ALTER TABLE "balance_transactions" ADD CONSTRAINT "balance_transactions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "balance_transactions" ADD CONSTRAINT "balance_transactions_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "balance_transactions" ADD CONSTRAINT "balance_transactions_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Every confirmed transfer is a ledger row. From now on an invoice counts only the payments its charges
-- received on time; for the history it keeps what version 1 counted (late money too, so that an
-- invoice PAID then stays paid in full), except money that reached a voided one, which it never took.
INSERT INTO "balance_transactions" ("id", "merchant_id", "livemode", "type", "amount", "charge_id", "refund_id", "invoice_id", "chain_id", "tx_hash",
                                    "block_number", "transfer_id", "created_at")
SELECT 'btx_' || substr(md5(t."id"), 1, 24), c."merchant_id", c."livemode",
       (CASE t."kind" WHEN 'PAYMENT' THEN 'payment' WHEN 'PAYOUT' THEN 'payout' WHEN 'FEE' THEN 'fee' ELSE 'refund' END)::"BalanceTransactionType",
       CASE WHEN t."kind" = 'PAYMENT' THEN t."amount" ELSE -t."amount" END,
       t."charge_id", t."refund_id", CASE WHEN t."kind" = 'PAYMENT' AND i."status" <> 'VOID' THEN c."invoice_id" END,
       t."chain_id", t."tx_hash", t."block_number", t."id", coalesce(t."confirmed_at", t."created_at")
FROM "chain_transfers" t JOIN "charges" c ON c."id" = t."charge_id" LEFT JOIN "invoices" i ON i."id" = c."invoice_id"
WHERE t."status" = 'CONFIRMED';

-- Rows are immutable: a correction is a new row (a reversal), never an edit.
CREATE FUNCTION "balance_transactions_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'balance transactions are immutable: record a reversal instead';
END;
$$;
CREATE TRIGGER "balance_transactions_immutable" BEFORE UPDATE OR DELETE ON "balance_transactions"
  FOR EACH ROW EXECUTE FUNCTION "balance_transactions_immutable"();

-- The money fields, derived from the ledger.
UPDATE "charges" c SET
  "amount_received" = CASE WHEN l."payments" IS NULL THEN NULL ELSE l."payments" END,
  "fee_amount" = CASE WHEN l."fees" IS NULL AND l."payouts" IS NULL THEN NULL ELSE -coalesce(l."fees", 0) END,
  "net_amount" = CASE WHEN l."fees" IS NULL AND l."payouts" IS NULL THEN NULL ELSE -coalesce(l."payouts", 0) END,
  "settled_amount" = -coalesce(l."fees", 0) - coalesce(l."payouts", 0),
  "amount_refunded" = -coalesce(l."refunds", 0)
FROM (
  SELECT "charge_id",
    sum("amount") FILTER (WHERE "type" = 'payment') AS "payments",
    sum("amount") FILTER (WHERE "type" = 'fee') AS "fees",
    sum("amount") FILTER (WHERE "type" = 'payout') AS "payouts",
    sum("amount") FILTER (WHERE "type" = 'refund') AS "refunds"
  FROM "balance_transactions" GROUP BY "charge_id"
) l WHERE l."charge_id" = c."id";
UPDATE "clones" k SET "held" = l."held"
FROM (SELECT "charge_id", "chain_id", sum("amount") FILTER (WHERE "type" <> 'refund') AS "held" FROM "balance_transactions" GROUP BY "charge_id", "chain_id") l
WHERE l."charge_id" = k."charge_id" AND l."chain_id" = k."chain_id";
UPDATE "invoices" i SET "amount_paid" = coalesce((SELECT sum("amount") FROM "balance_transactions" b WHERE b."invoice_id" = i."id"), 0);
-- Each settlement names its chain (a charge's money may now reach it on any enabled chain).
UPDATE "charges" SET "settlements" = (SELECT jsonb_agg(e || jsonb_build_object('chainId', "chain_id")) FROM jsonb_array_elements("settlements") e)
WHERE jsonb_array_length("settlements") > 0;

-- Authorizations: the gasless payments' table, now for refunds too.
ALTER TABLE "charge_authorizations" RENAME TO "authorizations";
ALTER TYPE "ChargeAuthorizationStatus" RENAME TO "AuthorizationStatus";
CREATE TYPE "AuthorizationPurpose" AS ENUM ('PAYMENT', 'REFUND');
ALTER TABLE "authorizations" RENAME CONSTRAINT "charge_authorizations_pkey" TO "authorizations_pkey";
ALTER TABLE "authorizations" RENAME CONSTRAINT "charge_authorizations_charge_id_fkey" TO "authorizations_charge_id_fkey";
ALTER TABLE "authorizations" RENAME CONSTRAINT "charge_authorizations_tx_id_fkey" TO "authorizations_tx_id_fkey";
ALTER INDEX "charge_authorizations_chain_id_from_address_nonce_key" RENAME TO "authorizations_chain_id_from_address_nonce_key";
ALTER INDEX "charge_authorizations_chain_id_created_at_idx" RENAME TO "authorizations_chain_id_created_at_idx";
ALTER INDEX "charge_authorizations_tx_id_idx" RENAME TO "authorizations_tx_id_idx";
ALTER INDEX "charge_authorizations_relaying_idx" RENAME TO "authorizations_relaying_idx";
DROP INDEX "charge_authorizations_pending_key";
DROP INDEX "charge_authorizations_payer_pending_key";
ALTER TABLE "authorizations" ADD COLUMN "purpose" "AuthorizationPurpose" NOT NULL DEFAULT 'PAYMENT';
ALTER TABLE "authorizations" ALTER COLUMN "purpose" DROP DEFAULT;
ALTER TABLE "authorizations" ADD COLUMN "refund_id" TEXT;
ALTER TABLE "authorizations" ADD COLUMN "to_address" TEXT;
ALTER TABLE "authorizations" ADD COLUMN "used_tx_hash" TEXT;
ALTER TABLE "authorizations" ADD COLUMN "used_block" BIGINT;
ALTER TABLE "authorizations" ADD COLUMN "ended_at" TIMESTAMPTZ(3);
ALTER TABLE "authorizations" ADD COLUMN "end_reason" TEXT;
ALTER TABLE "authorizations" ALTER COLUMN "gas_estimate" DROP NOT NULL;
UPDATE "authorizations" a SET "to_address" = c."clone_address" FROM "charges" c WHERE c."id" = a."charge_id";
ALTER TABLE "authorizations" ALTER COLUMN "to_address" SET NOT NULL;
-- The payments already mined, or failed long ago, are no longer on their way.
UPDATE "authorizations" SET "ended_at" = "updated_at", "end_reason" = CASE WHEN "status" = 'MINED' THEN 'used' ELSE 'expired' END
  WHERE "status" IN ('MINED', 'FAILED');
INSERT INTO "authorizations" ("id", "purpose", "charge_id", "refund_id", "chain_id", "from_address", "to_address", "value", "valid_after", "valid_before",
                              "nonce", "signature", "status", "tx_id", "error", "ended_at", "end_reason", "created_at", "updated_at")
SELECT 'auth_' || substr(md5(r."id"), 1, 24), 'REFUND', r."charge_id", r."id", r."chain_id", r."authorization"->>'from', r."authorization"->>'to',
       (r."authorization"->>'value')::numeric, (r."authorization"->>'validAfter')::numeric, (r."authorization"->>'validBefore')::numeric,
       r."authorization"->>'nonce', r."authorization"->>'signature',
       (CASE WHEN t."status" IN ('MINED', 'CONFIRMED') THEN 'MINED'
             WHEN t."status" = 'FAILED' OR r."authorization_error" IS NOT NULL OR r."status" IN ('COMPLETED', 'CANCELLED') THEN 'FAILED'
             WHEN r."authorization_tx_id" IS NOT NULL THEN 'SENT' ELSE 'RELAYING' END)::"AuthorizationStatus",
       r."authorization_tx_id", r."authorization_error",
       CASE WHEN r."status" IN ('COMPLETED', 'CANCELLED') THEN r."updated_at" END,
       CASE WHEN r."status" = 'COMPLETED' THEN 'used' WHEN r."status" = 'CANCELLED' THEN 'expired' END,
       r."created_at", r."updated_at"
FROM "refunds" r LEFT JOIN "relayer_transactions" t ON t."id" = r."authorization_tx_id" WHERE r."authorization" IS NOT NULL
ON CONFLICT DO NOTHING;
CREATE UNIQUE INDEX "authorizations_payment_on_its_way_key" ON "authorizations"("charge_id") WHERE "purpose" = 'PAYMENT' AND "ended_at" IS NULL;
CREATE UNIQUE INDEX "authorizations_refund_on_its_way_key" ON "authorizations"("refund_id") WHERE "ended_at" IS NULL;
-- One being relayed per payer: each is checked against the payer's balance alone, so two at once could
-- spend the same USDC twice and the second would revert on the relayer's gas. Version 1 let a wallet
-- have several: those not sent yet beyond the oldest are refused now (the merchant gives them again);
-- two already sent cannot be told apart from here, so the upgrade waits for them.
UPDATE "authorizations" a SET "status" = 'FAILED', "error" = 'not sent before the upgrade; give it again', "ended_at" = CURRENT_TIMESTAMP, "end_reason" = 'expired'
WHERE a."status" = 'RELAYING' AND EXISTS (
  SELECT 1 FROM "authorizations" b WHERE b."chain_id" = a."chain_id" AND b."from_address" = a."from_address" AND b."status" IN ('RELAYING', 'SENT')
    AND (b."status" = 'SENT' OR b."created_at" < a."created_at" OR (b."created_at" = a."created_at" AND b."id" < a."id")));
DO $$
DECLARE busy RECORD;
BEGIN
  SELECT "chain_id", "from_address" INTO busy FROM "authorizations" WHERE "status" = 'SENT' GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'two relayed authorizations from % on chain % are still waiting to be mined: run the previous version until they are, then upgrade', busy."from_address", busy."chain_id";
  END IF;
END;
$$;
CREATE UNIQUE INDEX "authorizations_payer_relaying_key" ON "authorizations"("chain_id", "from_address") WHERE "status" IN ('RELAYING', 'SENT');
CREATE INDEX "authorizations_charge_id_idx" ON "authorizations"("charge_id");
CREATE INDEX "authorizations_refund_id_idx" ON "authorizations"("refund_id");
CREATE INDEX "authorizations_on_its_way_idx" ON "authorizations"("chain_id") WHERE "ended_at" IS NULL;
ALTER TABLE "authorizations" ADD CONSTRAINT "authorizations_refund_id_fkey" FOREIGN KEY ("refund_id") REFERENCES "refunds"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Refunds: their transfer is a chain transfer, their authorizations are rows of their own.
DROP INDEX "refunds_transfer_key";
ALTER TABLE "refunds" DROP COLUMN "log_index";
ALTER TABLE "refunds" DROP COLUMN "block_number";
ALTER TABLE "refunds" DROP COLUMN "authorization";
ALTER TABLE "refunds" DROP COLUMN "authorization_tx_id";
ALTER TABLE "refunds" DROP COLUMN "authorization_error";

-- Sweeps: other tokens and the native coin paid out of a clone to its merchant.
CREATE TYPE "SweepStatus" AS ENUM ('PENDING', 'SENT', 'DONE', 'FAILED');
CREATE TABLE "sweeps" (
    "id" TEXT NOT NULL,
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "token" TEXT NOT NULL,
    "status" "SweepStatus" NOT NULL DEFAULT 'PENDING',
    "tx_id" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sweeps_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sweeps_chain_id_status_idx" ON "sweeps"("chain_id", "status");
CREATE INDEX "sweeps_charge_id_idx" ON "sweeps"("charge_id");
ALTER TABLE "sweeps" ADD CONSTRAINT "sweeps_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "sweeps" ADD CONSTRAINT "sweeps_tx_id_fkey" FOREIGN KEY ("tx_id") REFERENCES "relayer_transactions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- The chain's clock as the indexer reads it.
ALTER TABLE "chain_cursors" ADD COLUMN "block_time" TIMESTAMPTZ(3);
ALTER TABLE "chain_cursors" ADD COLUMN "confirmed_block" BIGINT;
ALTER TABLE "chain_cursors" ADD COLUMN "confirmed_time" TIMESTAMPTZ(3);
ALTER TABLE "chain_blocks" ADD COLUMN "timestamp" TIMESTAMPTZ(3);

-- What the new tables replace.
DROP TABLE "payments";
DROP TABLE "settlements";
DROP TABLE "clone_deployments";
DROP TYPE "PaymentStatus";
DROP TYPE "DeploymentStatus";
DROP INDEX "charges_flush_due_idx";
ALTER TABLE "charges" DROP CONSTRAINT "charges_flush_id_fkey";
ALTER TABLE "charges" DROP COLUMN "flush_id";
ALTER TABLE "charges" DROP COLUMN "flush_retry_at";
ALTER TABLE "charges" DROP COLUMN "flush_failures";
