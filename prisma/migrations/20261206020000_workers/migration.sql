-- Worker membership (jobs/chain-share.ts): each worker process beats here every few seconds; the live ones
-- (seen within the timeout, by the database's clock) split the chains between them, ceil(chains / workers) each.
CREATE TABLE "workers" (
    "id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workers_pkey" PRIMARY KEY ("id")
);
