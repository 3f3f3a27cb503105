-- Each chain's head as the indexer last saw it, so /metrics can report how far behind it is.
ALTER TABLE "chain_cursors" ADD COLUMN "head_block" BIGINT;
