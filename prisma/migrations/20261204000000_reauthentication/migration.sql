-- Dashboard safety (API.md "Dashboard safety"): a session remembers when its user last gave the
-- password again, a user's last accepted TOTP step makes each code single-use, and one-time recovery
-- codes (their hashes) stand in for a lost authenticator app.

ALTER TABLE "dashboard_sessions" ADD COLUMN "reauthenticated_at" TIMESTAMPTZ(3);

ALTER TABLE "users" ADD COLUMN "totp_last_step" INTEGER;

CREATE TABLE "recovery_codes" (
    "user_id" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recovery_codes_pkey" PRIMARY KEY ("user_id","code_hash")
);

ALTER TABLE "recovery_codes" ADD CONSTRAINT "recovery_codes_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
