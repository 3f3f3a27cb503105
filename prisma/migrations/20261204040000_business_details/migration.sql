-- The seller's business details that invoices print (issue 34): legal name, postal address, tax id and a
-- logo kept as bytes (PNG or JPEG), so that rendering a PDF never fetches anything. An invoice keeps the
-- details it was finalized with, as it keeps its customer's. Nullable columns: the previous release
-- neither reads nor writes them.
ALTER TABLE "merchants" ADD COLUMN "legal_name" TEXT;
ALTER TABLE "merchants" ADD COLUMN "business_address" JSONB;
ALTER TABLE "merchants" ADD COLUMN "tax_id" TEXT;
ALTER TABLE "merchants" ADD COLUMN "logo" BYTEA;
ALTER TABLE "merchants" ADD COLUMN "logo_type" TEXT;
ALTER TABLE "invoices" ADD COLUMN "seller_details" JSONB;
