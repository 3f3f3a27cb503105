-- Team roles and the security history (issue 45).

-- Users from before roles could do everything: they are owners. Rows a previous release writes while
-- this one rolls out (an accepted invitation) get the least power; this release always sets the role.
ALTER TABLE "users" ADD COLUMN "role" TEXT NOT NULL DEFAULT 'owner';
ALTER TABLE "users" ALTER COLUMN "role" SET DEFAULT 'viewer';

-- CreateTable
CREATE TABLE "security_events" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "user_id" TEXT,
    "email" TEXT,
    "ip" TEXT,
    "user_agent" TEXT,
    "detail" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "security_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "security_events_merchant_id_created_at_id_idx" ON "security_events"("merchant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "security_events_created_at_idx" ON "security_events"("created_at");

-- AddForeignKey
ALTER TABLE "security_events" ADD CONSTRAINT "security_events_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
