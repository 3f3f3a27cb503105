-- Underpayment tolerance (API.md "Refunds"): confirmed money at most this many basis points short of
-- the amount completes a charge. The merchant's setting is copied onto each charge when it is
-- created, like the fee: a buyer's charge keeps the terms it was created with.
ALTER TABLE "merchants" ADD COLUMN "underpayment_tolerance_bps" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "charges" ADD COLUMN "underpayment_tolerance_bps" INTEGER NOT NULL DEFAULT 0;
