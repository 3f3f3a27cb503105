-- Reorg re-checks (issue 41): the confirmed transfers a reorg deeper than the confirmations left above
-- its fork, written in the same transaction as the rollback, so that a crash or a node refusing
-- receipts between the rollback and the check loses none. The indexer works them off before it reads
-- new blocks; each is marked done in the transaction that relocates or reverses its transfer. At most
-- one open check per transfer: a second reorg while it waits adds nothing.
CREATE TABLE "reorg_rechecks" (
    "id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "fact_key" TEXT NOT NULL,
    "depth" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "done_at" TIMESTAMPTZ(3),
    "outcome" TEXT,

    CONSTRAINT "reorg_rechecks_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "reorg_rechecks_transfer_id_idx" ON "reorg_rechecks"("transfer_id");
CREATE UNIQUE INDEX "reorg_rechecks_open_key" ON "reorg_rechecks"("transfer_id") WHERE "done_at" IS NULL;
CREATE INDEX "reorg_rechecks_open_idx" ON "reorg_rechecks"("chain_id", "created_at") WHERE "done_at" IS NULL;

ALTER TABLE "reorg_rechecks" ADD CONSTRAINT "reorg_rechecks_transfer_id_fkey" FOREIGN KEY ("transfer_id") REFERENCES "chain_transfers"("id") ON DELETE CASCADE ON UPDATE CASCADE;
