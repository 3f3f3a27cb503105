-- An API key may be limited to the addresses its merchant's servers call from (IPs and CIDR ranges,
-- normalized); empty means any address.
ALTER TABLE "api_keys" ADD COLUMN "ip_allowlist" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
