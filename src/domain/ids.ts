// Object ids: a type prefix plus 24 random base62 characters (.docs/api.md "REST conventions").
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Random bytes are drawn 4 KiB at a time: one system call per request was a measurable cost.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++]!;
}

/** Uniformly random base62 string of `length` characters (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = nextByte();
    // 248 = 4 × 62: bytes at or above it would bias the first characters.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export type IdPrefix =
  | "mer"
  | "usr"
  | "sev"
  | "ses"
  | "ref"
  | "cus"
  | "chrg"
  | "evt"
  | "inv"
  | "key"
  | "jwk_test"
  | "jwk_live"
  | "whep"
  | "rtx"
  | "plink"
  | "cauth"
  | "auth"
  | "xfer"
  | "btx"
  | "swp"
  | "eml"
  | "pwr"
  | "invt"
  | "plan"
  | "sub"
  | "spull"
  | "x402"
  | "x402pay";

/** A new id such as `cus_4fG…`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/**
 * The id with `prefix` that `material` always gives: 24 base62 characters of its SHA-256 (about 142
 * bits), the shape of a random id, so nothing that reads ids can tell them apart.
 */
export function derivedId(prefix: IdPrefix, material: string): string {
  let n = BigInt(`0x${createHash("sha256").update(material).digest("hex")}`);
  let out = "";
  for (let i = 0; i < 24; i++) {
    out += ALPHABET[Number(n % 62n)];
    n /= 62n;
  }
  return `${prefix}_${out}`;
}

/** True when `id` has the shape of an id with `prefix` (cheap check before touching the database). */
export function looksLikeId(prefix: IdPrefix, id: string): boolean {
  return id.length === prefix.length + 25 && id.startsWith(`${prefix}_`) && /^[0-9A-Za-z]+$/.test(id.slice(prefix.length + 1));
}

/** The SHA-256 (hex) of a secret token (an API key, a session, a reset or invitation link, a device cookie): all that is stored of it. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
