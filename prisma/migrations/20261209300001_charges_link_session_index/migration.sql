-- stablegate: no-transaction
-- Pay on a payment link's page looks up the PENDING charge its buyer session made before.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_link_session_hash_idx" ON "charges"("link_session_hash") WHERE "link_session_hash" IS NOT NULL;
