-- Webhooks: endpoints per merchant and mode (with a rotating signing secret and an optional event
-- filter), the delivery outbox written in the same transaction as each event, and every attempt.
-- The merchants' old single webhook URL per mode becomes an endpoint with a fresh secret (none was
-- ever used to sign anything), then the columns go.

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED');


-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "event_types" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("event_id","endpoint_id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "status_code" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "error" TEXT,
    "succeeded" BOOLEAN NOT NULL,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_endpoints_merchant_id_livemode_idx" ON "webhook_endpoints"("merchant_id", "livemode");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_idx" ON "webhook_deliveries"("endpoint_id");

-- CreateIndex
CREATE INDEX "webhook_attempts_event_id_endpoint_id_attempted_at_idx" ON "webhook_attempts"("event_id", "endpoint_id", "attempted_at");

-- CreateIndex
CREATE INDEX "events_merchant_id_livemode_type_created_at_id_idx" ON "events"("merchant_id", "livemode", "type", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_event_id_endpoint_id_fkey" FOREIGN KEY ("event_id", "endpoint_id") REFERENCES "webhook_deliveries"("event_id", "endpoint_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The dispatcher's queue: PENDING deliveries by when they are due.
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"("next_attempt_at") WHERE "status" = 'PENDING';

-- Existing webhook URLs become endpoints. Ids and secrets from gen_random_uuid (core PostgreSQL):
-- 24 hex characters are valid base62, and two UUIDs give the 32 bytes of a secret.
INSERT INTO "webhook_endpoints" ("id", "merchant_id", "livemode", "url", "secret")
SELECT 'whep_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), m."id", u."livemode", u."url",
       'whsec_' || encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64')
FROM "merchants" m
CROSS JOIN LATERAL (VALUES (false, m."test_webhook_url"), (true, m."live_webhook_url")) AS u("livemode", "url")
WHERE u."url" IS NOT NULL;

-- AlterTable
ALTER TABLE "merchants" DROP COLUMN "live_webhook_url",
DROP COLUMN "test_webhook_url";
