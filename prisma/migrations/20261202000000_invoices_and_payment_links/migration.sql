-- Invoices (API.md "Invoices") fill the table the first migration left empty, and payment links
-- (API.md "Payment links") are new. A charge made to pay either keeps which one on its row.
CREATE TYPE "InvoiceStatus" AS ENUM ('DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE');

ALTER TABLE "invoices"
    ADD COLUMN "number" TEXT,
    ADD COLUMN "status" "InvoiceStatus" NOT NULL DEFAULT 'DRAFT',
    ADD COLUMN "currency" TEXT NOT NULL DEFAULT 'USDC',
    ADD COLUMN "line_items" JSONB NOT NULL DEFAULT '[]',
    ADD COLUMN "total" BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN "amount_paid" DECIMAL(78,0) NOT NULL DEFAULT 0,
    ADD COLUMN "customer_details" JSONB,
    ADD COLUMN "due_date" TIMESTAMPTZ(3),
    ADD COLUMN "memo" TEXT,
    ADD COLUMN "metadata" JSONB,
    ADD COLUMN "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    ADD COLUMN "finalized_at" TIMESTAMPTZ(3),
    ADD COLUMN "paid_at" TIMESTAMPTZ(3),
    ADD COLUMN "voided_at" TIMESTAMPTZ(3),
    ADD COLUMN "marked_uncollectible_at" TIMESTAMPTZ(3);
-- Numbers are per merchant and mode, assigned once at finalization.
CREATE UNIQUE INDEX "invoices_number_key" ON "invoices"("merchant_id", "livemode", "number") WHERE "number" IS NOT NULL;
CREATE INDEX "invoices_merchant_id_livemode_created_at_id_idx" ON "invoices"("merchant_id", "livemode", "created_at" DESC, "id" DESC);

-- The last invoice number given per merchant and mode. Taking the next one locks this row until the
-- finalization commits, so numbers are gap-free and never given twice, however many finalize at once.
CREATE TABLE "invoice_numbers" (
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "last_number" INTEGER NOT NULL,
    CONSTRAINT "invoice_numbers_pkey" PRIMARY KEY ("merchant_id", "livemode")
);
ALTER TABLE "invoice_numbers" ADD CONSTRAINT "invoice_numbers_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "payment_links" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "description" TEXT,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "success_url" TEXT,
    "cancel_url" TEXT,
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payment_links_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "payment_links_merchant_id_livemode_created_at_id_idx" ON "payment_links"("merchant_id", "livemode", "created_at" DESC, "id" DESC);
ALTER TABLE "payment_links" ADD CONSTRAINT "payment_links_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "charges" ADD COLUMN "invoice_id" TEXT, ADD COLUMN "payment_link_id" TEXT;
CREATE INDEX "charges_invoice_id_idx" ON "charges"("invoice_id") WHERE "invoice_id" IS NOT NULL;
CREATE INDEX "charges_payment_link_id_idx" ON "charges"("payment_link_id") WHERE "payment_link_id" IS NOT NULL;
ALTER TABLE "charges" ADD CONSTRAINT "charges_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "charges" ADD CONSTRAINT "charges_payment_link_id_fkey" FOREIGN KEY ("payment_link_id") REFERENCES "payment_links"("id") ON DELETE SET NULL ON UPDATE CASCADE;
