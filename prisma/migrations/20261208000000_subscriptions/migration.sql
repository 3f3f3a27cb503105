-- Subscriptions (issue 44): plans, subscriptions over SubscriptionsV1 spend permissions, their pulls,
-- and invoices that bill a subscription period.

-- CreateEnum
CREATE TYPE "SubscriptionStatus" AS ENUM ('INCOMPLETE', 'INCOMPLETE_EXPIRED', 'TRIALING', 'ACTIVE', 'PAST_DUE', 'CANCELED');

-- CreateEnum
CREATE TYPE "PullStatus" AS ENUM ('SENDING', 'SENT', 'SUCCEEDED', 'FAILED');

-- AlterEnum
ALTER TYPE "RelayerTxKind" ADD VALUE 'PULL';

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "billing_reason" TEXT,
ADD COLUMN     "period_end" TIMESTAMPTZ(3),
ADD COLUMN     "period_index" INTEGER,
ADD COLUMN     "period_start" TIMESTAMPTZ(3),
ADD COLUMN     "subscription_id" TEXT;

-- CreateTable
CREATE TABLE "plans" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "interval" TEXT NOT NULL,
    "interval_count" INTEGER NOT NULL,
    "trial_days" INTEGER NOT NULL DEFAULT 0,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

CONSTRAINT "plans_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "customer_id" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "status" "SubscriptionStatus" NOT NULL DEFAULT 'INCOMPLETE',
    "amount" BIGINT NOT NULL,
    "period_seconds" INTEGER NOT NULL,
    "fee_bps" INTEGER NOT NULL,
    "trial_days" INTEGER NOT NULL DEFAULT 0,
    "chain_id" INTEGER,
    "payer" TEXT,
    "settlement_wallet" TEXT,
    "spender" TEXT,
    "contract_address" TEXT,
    "permission" JSONB,
    "permission_hash" TEXT,
    "permission_signature" TEXT,
    "permit" JSONB,
    "current_period_start" TIMESTAMPTZ(3),
    "current_period_end" TIMESTAMPTZ(3),
    "period_index" INTEGER,
    "trial_end" TIMESTAMPTZ(3),
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "canceled_at" TIMESTAMPTZ(3),
    "cancel_reason" TEXT,
    "latest_invoice_id" TEXT,
    "next_pull_at" TIMESTAMPTZ(3),
    "failed_pulls" INTEGER NOT NULL DEFAULT 0,
    "upcoming_notified_for" TIMESTAMPTZ(3),
    "manage_token" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription_pulls" (
    "id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "invoice_id" TEXT,
    "chain_id" INTEGER NOT NULL,
    "period_index" INTEGER NOT NULL,
    "amount" BIGINT NOT NULL,
    "checkout" BOOLEAN NOT NULL DEFAULT false,
    "status" "PullStatus" NOT NULL DEFAULT 'SENDING',
    "tx_id" TEXT,
    "tx_hash" TEXT,
    "reason" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

CONSTRAINT "subscription_pulls_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "plans_merchant_id_livemode_created_at_id_idx" ON "plans"("merchant_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "subscriptions_merchant_id_livemode_created_at_id_idx" ON "subscriptions"("merchant_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "subscriptions_customer_id_idx" ON "subscriptions"("customer_id");

-- CreateIndex
CREATE INDEX "subscriptions_plan_id_idx" ON "subscriptions"("plan_id");

-- CreateIndex
CREATE INDEX "subscription_pulls_subscription_id_created_at_idx" ON "subscription_pulls"("subscription_id", "created_at");

-- CreateIndex
CREATE INDEX "subscription_pulls_tx_id_idx" ON "subscription_pulls"("tx_id");

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "plans" ADD CONSTRAINT "plans_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription_pulls" ADD CONSTRAINT "subscription_pulls_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription_pulls" ADD CONSTRAINT "subscription_pulls_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- A permission belongs to one subscription.
CREATE UNIQUE INDEX "subscriptions_permission_hash_key" ON "subscriptions"("permission_hash") WHERE "permission_hash" IS NOT NULL;

-- The renewal queue: subscriptions with a pull due.
CREATE INDEX "subscriptions_next_pull_at_idx" ON "subscriptions"("chain_id", "next_pull_at") WHERE "next_pull_at" IS NOT NULL;

-- Checkouts that may expire.
CREATE INDEX "subscriptions_incomplete_idx" ON "subscriptions"("expires_at") WHERE "status" = 'INCOMPLETE';

-- At most one pull on its way per subscription.
CREATE UNIQUE INDEX "subscription_pulls_in_flight_key" ON "subscription_pulls"("subscription_id") WHERE "status" IN ('SENDING', 'SENT');
