-- Rolling a key keeps the old one working for an overlap, so that a merchant can deploy the new one
-- first: the old key stops working at expires_at.
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
