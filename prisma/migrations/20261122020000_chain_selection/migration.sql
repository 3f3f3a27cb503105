-- Chain selection: the payment window, confirmations fixed on the charge, the events log and the
-- durable clone-deployment job (one row per charge, so a charge can never get two deploy jobs).

-- CreateEnum
CREATE TYPE "DeploymentStatus" AS ENUM ('PENDING', 'SENT', 'MINED');

-- AlterTable
ALTER TABLE "charges" ADD COLUMN     "confirmations" INTEGER;

-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "payment_window_minutes" INTEGER NOT NULL DEFAULT 15;

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "clone_deployments" (
    "charge_id" TEXT NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "status" "DeploymentStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "raw_tx" TEXT,
    "tx_hash" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "clone_deployments_pkey" PRIMARY KEY ("charge_id")
);

-- CreateIndex
CREATE INDEX "events_merchant_id_livemode_created_at_id_idx" ON "events"("merchant_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "clone_deployments_chain_id_status_next_attempt_at_idx" ON "clone_deployments"("chain_id", "status", "next_attempt_at");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "clone_deployments" ADD CONSTRAINT "clone_deployments_charge_id_fkey" FOREIGN KEY ("charge_id") REFERENCES "charges"("id") ON DELETE CASCADE ON UPDATE CASCADE;


