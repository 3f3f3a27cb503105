-- stablegate: no-transaction
-- The merchant's relayer gas of the day is summed over its chain's sweeps by creation time.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "sweeps_chain_id_created_at_idx" ON "sweeps"("chain_id", "created_at");
