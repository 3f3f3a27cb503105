-- stablegate: no-transaction
-- Charge search (domain/charge-search.ts): one index per thing a search can name, each read by a prefix.
-- text_pattern_ops lets LIKE 'prefix%' use the index whatever the database's collation; hex is searched
-- in lower case. The nullable columns are indexed only where set: a new charge adds no entry there.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_id_search_idx" ON "charges" ("id" text_pattern_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_order_id_search_idx" ON "charges" ("merchant_id", "livemode", "order_id" text_pattern_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_amount_idx" ON "charges" ("merchant_id", "livemode", "amount");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_clone_address_search_idx" ON "charges" (lower("clone_address") text_pattern_ops) WHERE "clone_address" IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS "charges_flush_tx_hash_search_idx" ON "charges" (lower("flush_tx_hash") text_pattern_ops) WHERE "flush_tx_hash" IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS "chain_transfers_tx_hash_search_idx" ON "chain_transfers" (lower("tx_hash") text_pattern_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS "customers_email_search_idx" ON "customers" ("merchant_id", "livemode", "email_lower" text_pattern_ops);
