// Secret API keys: `sk_live_…`/`sk_test_…`, stored only as SHA-256 hashes.
import { createHash } from "node:crypto";
import type { Prisma } from "../db/client.js";
import { AppError } from "./errors.js";
import { newId, randomBase62 } from "./ids.js";
import { modeName, type Principal } from "./scope.js";

const KEY_SHAPE = /^sk_(live|test)_[0-9A-Za-z]{32,128}$/;

/** A freshly made key: `secret` is shown to the merchant once and never stored. */
export interface NewApiKey {
  id: string;
  secret: string;
  livemode: boolean;
}

/** SHA-256 hex of a secret key, the only form in which keys are stored. */
export function hashApiKey(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Creates and stores a key for `merchantId` in one mode. */
export async function createApiKey(prisma: Prisma, merchantId: string, livemode: boolean): Promise<NewApiKey> {
  const secret = `sk_${modeName(livemode)}_${randomBase62(32)}`;
  const id = newId("key");
  await prisma.apiKey.create({ data: { id, merchantId, livemode, hash: hashApiKey(secret), last4: secret.slice(-4) } });
  return { id, secret, livemode };
}

/** Revokes a key; false when no active key has that id. */
export async function revokeApiKey(prisma: Prisma, keyId: string): Promise<boolean> {
  const { count } = await prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } });
  return count === 1;
}

/**
 * Resolves `X-API-Key` values to principals. Lookups are cached for `ttlMs` so the hot path costs
 * no query; a key revoked elsewhere stops working within that time. Misses are cached apart from
 * hits, in a smaller cache: a flood of made-up keys evicts only other made-up keys, never a real one.
 */
export class ApiKeyAuthenticator {
  private readonly hits: TtlCache<Principal>;
  private readonly misses: TtlCache<null>;

  constructor(
    private readonly prisma: Prisma,
    private readonly ttlMs: number,
    /** Most keys and made-up keys remembered. */
    sizes = { hits: 10_000, misses: 1_000 },
  ) {
    this.hits = new TtlCache(sizes.hits);
    this.misses = new TtlCache(sizes.misses);
  }

  /** The principal of `key`, or 401 `api_key_missing` / `api_key_invalid`. */
  async authenticate(key: string | undefined): Promise<Principal> {
    if (key === undefined || key === "") {
      throw new AppError("api_key_missing", "No API key provided. Send your secret key in the X-API-Key header.");
    }
    const principal = KEY_SHAPE.test(key) ? await this.lookup(hashApiKey(key)) : null;
    if (!principal) throw new AppError("api_key_invalid", "Invalid API key provided. Check the X-API-Key header; keys are sk_live_… or sk_test_….");
    return principal;
  }

  /** Forgets cached lookups (after a revocation in this process). */
  clear(): void {
    this.hits.clear();
    this.misses.clear();
  }

  private async lookup(hash: string): Promise<Principal | null> {
    const now = Date.now();
    const hit = this.hits.get(hash, now) ?? this.misses.get(hash, now);
    if (hit !== undefined) return hit;
    const row = await this.prisma.apiKey.findUnique({ where: { hash }, select: { id: true, merchantId: true, livemode: true, revokedAt: true } });
    const principal = row && !row.revokedAt ? { keyId: row.id, merchantId: row.merchantId, livemode: row.livemode } : null;
    if (this.ttlMs > 0) {
      if (principal) this.hits.set(hash, principal, now + this.ttlMs);
      else this.misses.set(hash, null, now + this.ttlMs);
    }
    return principal;
  }
}

/** A bounded map whose entries lapse; when full, the oldest entry makes room. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(private readonly max: number) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.until > now ? entry.value : undefined;
  }

  set(key: string, value: V, until: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until });
  }

  clear(): void {
    this.entries.clear();
  }
}
