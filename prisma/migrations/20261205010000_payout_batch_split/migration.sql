-- A payout batch that reverts splits itself (issue 41): each clone in it remembers the most clones its next
-- payout may share a transaction with, halved with each revert, until a clone that fails alone is found.
-- Nullable: the previous release neither reads nor writes it.
ALTER TABLE "clones" ADD COLUMN "flush_batch_max" INTEGER;
