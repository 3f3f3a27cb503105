-- stablegate: no-transaction
-- Refund addresses and settlement wallets are refused when they are a charge's clone address on any chain
-- (domain/destinations.ts): the lookup by address needs an index (charges' deposit_address has its unique one).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "clones_address_idx" ON "clones"("address");
