-- Email (issue 43): the alerts already emailed to a merchant's team about a charge (needs review, payout
-- blocked), one row per charge and reason, so the same finding never emails twice.
CREATE TABLE "charge_alerts" (
    "charge_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "charge_alerts_pkey" PRIMARY KEY ("charge_id","reason")
);
