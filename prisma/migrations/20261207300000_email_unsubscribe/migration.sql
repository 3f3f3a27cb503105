-- Receipts' unsubscribe links (issue 43): each merchant's own key for the HMAC of merchant and address a
-- link carries, so the API that records the suppression and the worker that wrote the receipt agree on
-- it without a shared setting, and a link keeps working across restarts.
ALTER TABLE "merchants" ADD COLUMN "email_token_secret" TEXT NOT NULL DEFAULT encode(sha256((gen_random_uuid()::text || gen_random_uuid()::text)::bytea), 'hex');
