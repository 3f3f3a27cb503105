// Secret API keys: `sk_live_…`/`sk_test_…`, stored only as SHA-256 hashes.
import { BlockList, isIP } from "node:net";
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import type { Confirmation } from "./confirmation.js";
import { AppError, notFound } from "./errors.js";
import { hashToken, newId, randomBase62 } from "./ids.js";
import type { ApiKeyRoll } from "./api-key-requests.js";
import { modeName, type Principal } from "./scope.js";
import { type Actor, recordSecurityEvent } from "./security-events.js";
import { securityNotice } from "./team-emails.js";

const KEY_SHAPE = /^sk_(live|test)_[0-9A-Za-z]{32,128}$/;

/** A freshly made key: `secret` is shown to the merchant once and never stored. */
export interface NewApiKey {
  id: string;
  secret: string;
  livemode: boolean;
  /** The addresses it may be used from; empty means any. */
  ipAllowlist: string[];
  /** What the merchant calls it; null when unnamed. */
  name: string | null;
}

/** SHA-256 hex of a secret key, the only form in which keys are stored (ids.ts hashToken). */
export const hashApiKey = hashToken;

/** Most entries an allowlist holds. */
const ALLOWLIST_MAX = 50;

/**
 * Checks and normalizes an IP allowlist: IPv4 and IPv6 addresses and CIDR ranges (`203.0.113.0/24`,
 * `2001:db8::/32`). 400 `parameter_invalid` naming `ipAllowlist` for anything else.
 */
export function parseIpAllowlist(entries: readonly string[]): string[] {
  const invalid = (why: string) => new AppError("parameter_invalid", `Invalid ipAllowlist: ${why}`, "ipAllowlist");
  if (entries.length > ALLOWLIST_MAX) throw invalid(`at most ${ALLOWLIST_MAX} entries`);
  return entries.map((raw) => {
    const entry = raw.trim().toLowerCase();
    const [ip = "", bits, extra] = entry.split("/");
    const version = isIP(ip);
    const maxBits = version === 6 ? 128 : 32;
    if (version === 0 || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits))) {
      throw invalid(`'${raw}' is not an IP address or a CIDR range such as 203.0.113.0/24 or 2001:db8::/32`);
    }
    return entry;
  });
}

/** Whether an address is on `allowlist` (parsed by parseIpAllowlist); null when the list is empty (any address). */
function allowlistCheck(allowlist: readonly string[]): ((address: string) => boolean) | null {
  if (allowlist.length === 0) return null;
  const list = new BlockList();
  for (const entry of allowlist) {
    const [ip = "", bits] = entry.split("/");
    const type = isIP(ip) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return (address) => {
    // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
    const plain = address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
    const version = isIP(plain);
    return version !== 0 && list.check(plain, version === 6 ? "ipv6" : "ipv4");
  };
}

/** Longest key name. */
const NAME_MAX = 100;

/** A key's name, trimmed (blank: none); 400 `parameter_invalid` naming `name` past 100 characters. */
export function parseKeyName(raw: string | null | undefined): string | null {
  const name = raw?.trim() ?? "";
  if (name.length > NAME_MAX) throw new AppError("parameter_invalid", `Invalid name: at most ${NAME_MAX} characters`, "name");
  return name === "" ? null : name;
}

/**
 * Creates and stores a key for `merchantId` in one mode, usable from `ipAllowlist` only when given,
 * named `name` when given. A new secret is a way in: it awaits `confirm` (a re-authentication from the
 * dashboard) first, and is recorded in the security history as `actor`'s.
 */
export async function createApiKey(
  prisma: Prisma,
  merchantId: string,
  livemode: boolean,
  ipAllowlist: readonly string[],
  confirm: Confirmation,
  actor: Actor,
  name?: string | null,
): Promise<NewApiKey> {
  const keyName = parseKeyName(name);
  await confirm();
  return prisma.$transaction(async (tx) => {
    const key = await storeApiKey(tx, merchantId, livemode, ipAllowlist, keyName);
    await keyNotice(tx, merchantId, "created", key.id, livemode, `A new ${modeName(livemode)}-mode API key was created.`);
    await recordSecurityEvent(tx, merchantId, "api_key_created", actor, keyDetail(key.id, livemode, key.secret.slice(-4)));
    return key;
  });
}

/** What the history says of a key: never its secret. */
function keyDetail(keyId: string, livemode: boolean, last4: string): Record<string, string> {
  return { keyId, mode: modeName(livemode), last4 };
}

/** Tells the merchant's team that an API key was created, rolled or revoked (domain/team-emails.ts). */
function keyNotice(tx: P.TransactionClient, merchantId: string, what: string, keyId: string, livemode: boolean, paragraph: string): Promise<number> {
  return securityNotice(tx, merchantId, {
    subject: `An API key was ${what}`,
    paragraphs: [paragraph],
    facts: [
      ["API key", keyId],
      ["Mode", modeName(livemode)],
    ],
    livemode,
    relatedId: keyId,
  });
}

/** Stores a new key; its secret is returned this once. */
async function storeApiKey(
  prisma: Pick<P.TransactionClient, "apiKey">,
  merchantId: string,
  livemode: boolean,
  ipAllowlist: readonly string[],
  name: string | null,
): Promise<NewApiKey> {
  const allowed = parseIpAllowlist(ipAllowlist);
  const secret = `sk_${modeName(livemode)}_${randomBase62(32)}`;
  const id = newId("key");
  await prisma.apiKey.create({ data: { id, merchantId, livemode, hash: hashApiKey(secret), last4: secret.slice(-4), ipAllowlist: allowed, name } });
  return { id, secret, livemode, ipAllowlist: allowed, name };
}

/** A rolled key: its replacement (shown once), and when the old one stops working. */
export interface RolledApiKey {
  key: NewApiKey;
  previous: { id: string; expiresAt: Date };
}

/**
 * Replaces an active key with a new one of the same merchant, mode and allowlist; the old key keeps
 * working for `overlapHours` (0–168, default 24) so that the new one can be deployed first. A key
 * already rolled or revoked (or, with `merchantId`, another merchant's) cannot be rolled: 400
 * `parameter_invalid` naming `keyId`. It makes a new secret, so it awaits `confirm` first as createApiKey does.
 * Recorded in the security history as `actor`'s.
 */
export async function rollApiKey(
  prisma: Prisma,
  keyId: string,
  { overlapHours }: ApiKeyRoll,
  confirm: Confirmation,
  { actor, merchantId, now = new Date() }: { actor: Actor; merchantId?: string; now?: Date },
): Promise<RolledApiKey> {
  await confirm();
  const expiresAt = new Date(now.getTime() + overlapHours * 3_600_000);
  return prisma.$transaction(async (tx) => {
    // Only the caller that sets the expiry rolls the key: two concurrent rolls make one new key.
    const [old] = await tx.apiKey.updateManyAndReturn({
      where: { id: keyId, merchantId, revokedAt: null, expiresAt: null },
      data: { expiresAt },
      select: { merchantId: true, livemode: true, ipAllowlist: true, name: true, last4: true },
    });
    if (!old) throw new AppError("parameter_invalid", `No API key ${keyId} to roll: it does not exist, was revoked, or was rolled already.`, "keyId");
    const key = await storeApiKey(tx, old.merchantId, old.livemode, old.ipAllowlist, old.name);
    await keyNotice(
      tx,
      old.merchantId,
      "rolled",
      keyId,
      old.livemode,
      `API key ${keyId} was replaced by ${key.id}; the old key works until ${expiresAt.toISOString()}.`,
    );
    await recordSecurityEvent(tx, old.merchantId, "api_key_rolled", actor, {
      ...keyDetail(keyId, old.livemode, old.last4),
      newKeyId: key.id,
      expiresAt: expiresAt.toISOString(),
    });
    return { key, previous: { id: keyId, expiresAt } };
  });
}

/** Revokes a key (only `merchantId`'s when given), recorded as `actor`'s; false when no such active key exists. */
export async function revokeApiKey(prisma: Prisma, keyId: string, { actor, merchantId }: { actor: Actor; merchantId?: string }): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const [key] = await tx.apiKey.updateManyAndReturn({
      where: { id: keyId, merchantId, revokedAt: null },
      data: { revokedAt: new Date() },
      select: { merchantId: true, livemode: true, last4: true },
    });
    if (!key) return false;
    await keyNotice(tx, key.merchantId, "revoked", keyId, key.livemode, `API key ${keyId} was revoked: it no longer works.`);
    await recordSecurityEvent(tx, key.merchantId, "api_key_revoked", actor, keyDetail(keyId, key.livemode, key.last4));
    return true;
  });
}

/** What listings show of a key: never the secret or its hash. */
const LISTED = {
  id: true,
  livemode: true,
  last4: true,
  ipAllowlist: true,
  createdAt: true,
  revokedAt: true,
  expiresAt: true,
  name: true,
  lastUsedAt: true,
} as const;

/** A merchant's keys, oldest first, as listings show them. */
export function listApiKeys(prisma: Pick<Prisma, "apiKey">, merchantId: string) {
  return prisma.apiKey.findMany({ where: { merchantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: LISTED });
}

/** Whether a listed key still works: not revoked, and not past the end of a roll's overlap. */
export function apiKeyActive(key: { revokedAt: Date | null; expiresAt: Date | null }, now = new Date()): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}

/** One of a merchant's keys as listings show it, or 404 naming `id`. */
export async function getApiKey(prisma: Pick<Prisma, "apiKey">, merchantId: string, id: string) {
  const key = await prisma.apiKey.findFirst({ where: { id, merchantId }, select: LISTED });
  if (!key) throw notFound("API key", id);
  return key;
}

/** A known key: its principal, the check of its allowlist (null: any address), its end if rolled, and when it was last stamped as used. */
interface KnownKey {
  principal: Principal;
  allows: ((address: string) => boolean) | null;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

/** How stale a key's `lastUsedAt` may get: it is written at most once per this, not per request. */
export const LAST_USED_PRECISION_MS = 60_000;

/**
 * Resolves `X-API-Key` values to principals. Lookups are cached for `ttlMs` so the hot path costs
 * no query; a key revoked elsewhere stops working within that time. Misses are cached apart from
 * hits, in a smaller cache: a flood of made-up keys evicts only other made-up keys, never a real one.
 */
export class ApiKeyAuthenticator {
  private readonly hits: TtlCache<KnownKey>;
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

  /**
   * The principal of `key` used from `address`, or 401 `api_key_missing` / `api_key_invalid` /
   * `api_key_ip_not_allowed` (the key has an allowlist without that address).
   */
  async authenticate(key: string | undefined, address: string): Promise<Principal> {
    if (key === undefined || key === "") {
      throw new AppError("api_key_missing", "No API key provided. Send your secret key in the X-API-Key header.");
    }
    const found = KEY_SHAPE.test(key) ? await this.lookup(hashApiKey(key)) : null;
    // A rolled key may be cached past its end: the end is checked at each use.
    const known = found && (found.expiresAt === null || found.expiresAt > Date.now()) ? found : null;
    if (!known) throw new AppError("api_key_invalid", "Invalid API key provided. Check the X-API-Key header; keys are sk_live_… or sk_test_….");
    if (known.allows && !known.allows(address)) {
      throw new AppError(
        "api_key_ip_not_allowed",
        `This API key cannot be used from ${address}: it only works from the addresses on its allowlist. Call from one of them, or use another key.`,
      );
    }
    await this.stampUse(known);
    return known.principal;
  }

  /**
   * Records that the key was used, when its stamp is a minute old or more. The cached entry carries
   * the stamp, so a busy key costs one write a minute per process; the conditional update keeps
   * processes sharing a key from writing more often than that.
   */
  private async stampUse(known: KnownKey): Promise<void> {
    const now = Date.now();
    if (known.lastUsedAt !== null && now - known.lastUsedAt < LAST_USED_PRECISION_MS) return;
    known.lastUsedAt = now;
    const stale = new Date(now - LAST_USED_PRECISION_MS);
    await this.prisma.apiKey
      .updateMany({
        where: { id: known.principal.credentialId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: stale } }] },
        data: { lastUsedAt: new Date(now) },
      })
      // A lost stamp is not worth refusing the request it came with.
      .catch(() => undefined);
  }

  /** Forgets cached lookups (after a revocation in this process). */
  clear(): void {
    this.hits.clear();
    this.misses.clear();
  }

  private async lookup(hash: string): Promise<KnownKey | null> {
    const now = Date.now();
    const hit = this.hits.get(hash, now) ?? this.misses.get(hash, now);
    if (hit !== undefined) return hit;
    const row = await this.prisma.apiKey.findUnique({
      where: { hash },
      select: { id: true, merchantId: true, livemode: true, revokedAt: true, ipAllowlist: true, expiresAt: true, lastUsedAt: true },
    });
    const known =
      row && !row.revokedAt
        ? {
            principal: { credentialId: row.id, merchantId: row.merchantId, livemode: row.livemode },
            allows: allowlistCheck(row.ipAllowlist),
            expiresAt: row.expiresAt?.getTime() ?? null,
            lastUsedAt: row.lastUsedAt?.getTime() ?? null,
          }
        : null;
    if (this.ttlMs > 0) {
      if (known) this.hits.set(hash, known, now + this.ttlMs);
      else this.misses.set(hash, null, now + this.ttlMs);
    }
    return known;
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
