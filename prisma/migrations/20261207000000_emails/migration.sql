-- Email (issue 43): the outbox the worker sends from (email/outbox.ts, jobs/email-sender.ts), the
-- merchant's email settings, the buyer's email a payment link collects, password resets, invitations,
-- the browsers a user has signed in from, and the addresses that unsubscribed from receipts.
CREATE TYPE "EmailStatus" AS ENUM ('QUEUED', 'SENT', 'FAILED', 'HELD');

CREATE TABLE "emails" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT,
    "livemode" BOOLEAN NOT NULL,
    "type" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "from_name" TEXT,
    "reply_to" TEXT,
    "subject" TEXT NOT NULL,
    "html" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "headers" JSONB,
    "attachments" JSONB,
    "inline_logo" BOOLEAN NOT NULL DEFAULT false,
    "related_id" TEXT,
    "status" "EmailStatus" NOT NULL DEFAULT 'QUEUED',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "emails_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "emails_merchant_id_livemode_created_at_id_idx" ON "emails"("merchant_id", "livemode", "created_at" DESC, "id" DESC);
-- The sender's claim reads the oldest due QUEUED rows only, however many were ever sent.
CREATE INDEX "emails_due_idx" ON "emails"("next_attempt_at") WHERE "status" = 'QUEUED';
ALTER TABLE "emails" ADD CONSTRAINT "emails_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "merchants" ADD COLUMN "email_invoices" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "email_receipts" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "email_refunds" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "support_email" TEXT;

ALTER TABLE "charges" ADD COLUMN "customer_email" TEXT;
ALTER TABLE "payment_links" ADD COLUMN "collect_email" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "password_resets" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "password_resets_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "password_resets_token_hash_key" ON "password_resets"("token_hash");
CREATE INDEX "password_resets_user_id_idx" ON "password_resets"("user_id");
ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "invitations" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'admin',
    "token_hash" TEXT NOT NULL,
    "invited_by" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "accepted_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invitations_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "invitations_token_hash_key" ON "invitations"("token_hash");
CREATE INDEX "invitations_merchant_id_idx" ON "invitations"("merchant_id");
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "user_devices" (
    "user_id" TEXT NOT NULL,
    "device_hash" TEXT NOT NULL,
    "user_agent" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_devices_pkey" PRIMARY KEY ("user_id","device_hash")
);
ALTER TABLE "user_devices" ADD CONSTRAINT "user_devices_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "email_suppressions" (
    "merchant_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "email_suppressions_pkey" PRIMARY KEY ("merchant_id","email")
);
ALTER TABLE "email_suppressions" ADD CONSTRAINT "email_suppressions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
