-- The chain indexer: a cursor and recent block hashes per chain (reorg detection), each payment to
-- a clone recorded once, and flush transactions tracked to confirmation. Charges gain what was
-- flushed out of their clone so far and the flush in flight for it. Deployments gain when their
-- current transaction was signed (a stuck one is replaced with higher fees).

-- CreateEnum
CREATE TYPE "PaymentStatus" AS ENUM ('SEEN', 'CONFIRMED');

-- CreateEnum
CREATE TYPE "FlushStatus" AS ENUM ('SENT', 'MINED', 'CONFIRMED', 'FAILED');

-- AlterTable
ALTER TABLE "charges" ADD COLUMN     "flush_id" TEXT,
ADD COLUMN     "flush_retry_at" TIMESTAMPTZ(3),
ADD COLUMN     "settled_amount" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "clone_deployments" ADD COLUMN     "sent_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "chain_cursors" (
    "chain_id" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_cursors_pkey" PRIMARY KEY ("chain_id")
);

-- CreateTable
CREATE TABLE "chain_blocks" (
    "chain_id" INTEGER NOT NULL,
    "number" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "parent_hash" TEXT NOT NULL,

    CONSTRAINT "chain_blocks_pkey" PRIMARY KEY ("chain_id","number")
);

-- CreateTable
CREATE TABLE "payments" (
    "id" TEXT NOT NULL,
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "status" "PaymentStatus" NOT NULL DEFAULT 'SEEN',
    "late" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "confirmed_at" TIMESTAMPTZ(3),

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "flushes" (
    "id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "status" "FlushStatus" NOT NULL DEFAULT 'SENT',
    "nonce" INTEGER NOT NULL,
    "raw_tx" TEXT NOT NULL,
    "tx_hashes" TEXT[],
    "tx_hash" TEXT,
    "block_number" BIGINT,
    "block_hash" TEXT,
    "bumps" INTEGER NOT NULL DEFAULT 0,
    "sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flushes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "payments_charge_id_idx" ON "payments"("charge_id");

-- CreateIndex
CREATE UNIQUE INDEX "payments_chain_id_tx_hash_log_index_key" ON "payments"("chain_id", "tx_hash", "log_index");

-- CreateIndex
CREATE INDEX "flushes_chain_id_status_idx" ON "flushes"("chain_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "charges_chain_id_clone_address_key" ON "charges"("chain_id", "clone_address");

-- AddForeignKey
ALTER TABLE "charges" ADD CONSTRAINT "charges_flush_id_fkey" FOREIGN KEY ("flush_id") REFERENCES "flushes"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- CreateIndex (partial): the confirmer reads only payments still waiting for confirmations.
CREATE INDEX "payments_seen_idx" ON "payments"("chain_id", "block_number") WHERE "status" = 'SEEN';

-- CreateIndex (partial): the settlement reads only charges whose clone holds unflushed money.
CREATE INDEX "charges_flush_due_idx" ON "charges"("chain_id") WHERE "amount_received" > "settled_amount";
