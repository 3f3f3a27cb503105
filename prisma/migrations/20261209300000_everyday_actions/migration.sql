-- API keys get a name and the time they last authenticated a request.
ALTER TABLE "api_keys" ADD COLUMN "name" TEXT, ADD COLUMN "last_used_at" TIMESTAMPTZ(3);

-- Each webhook attempt keeps the first 2 KB of what the endpoint answered.
ALTER TABLE "webhook_attempts" ADD COLUMN "response_body" TEXT;

-- A payment link may let buyers choose a quantity up to a maximum.
ALTER TABLE "payment_links" ADD COLUMN "quantity_max" INTEGER;

-- The hash of the buyer-session cookie of the payment link page that made a charge.
ALTER TABLE "charges" ADD COLUMN "link_session_hash" TEXT;
