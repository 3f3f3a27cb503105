// Time-based one-time passwords (RFC 6238 over RFC 4226): HMAC-SHA1, 6 digits, 30 s steps, as every
// authenticator app reads them from an otpauth:// URI.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const STEP_SECONDS = 30;
const DIGITS = 6;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** A new secret: 20 random bytes in base32, as RFC 4226 recommends. */
export function newTotpSecret(): string {
  const bytes = randomBytes(20);
  let bits = "";
  for (const b of bytes) bits += b.toString(2).padStart(8, "0");
  let out = "";
  for (let i = 0; i < bits.length; i += 5) out += BASE32[parseInt(bits.slice(i, i + 5).padEnd(5, "0"), 2)];
  return out;
}

function decodeBase32(secret: string): Buffer {
  let bits = "";
  for (const c of secret.replace(/=+$/, "").toUpperCase()) {
    const v = BASE32.indexOf(c);
    if (v < 0) throw new Error("not base32");
    bits += v.toString(2).padStart(5, "0");
  }
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** The code of `secret` for the step holding `atMs`. */
export function totpCode(secret: string, atMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / STEP_SECONDS)));
  const mac = createHmac("sha1", decodeBase32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** DIGITS;
  return String(value).padStart(DIGITS, "0");
}

/**
 * The step (30 s period since the epoch) whose code `code` is, checking now, a step before and a step
 * after (clocks drift); null when it is none of them. The caller makes it single-use by keeping the
 * last step accepted.
 */
export function totpStep(secret: string, code: string, nowMs = Date.now()): number | null {
  const given = Buffer.from(code.replace(/\s/g, ""));
  if (given.length !== DIGITS) return null;
  const now = Math.floor(nowMs / 1000 / STEP_SECONDS);
  let matched: number | null = null;
  // Every step is compared, so the time taken does not tell which one matched.
  for (const step of [now - 1, now, now + 1]) if (timingSafeEqual(Buffer.from(totpCode(secret, step * STEP_SECONDS * 1000)), given)) matched = step;
  return matched;
}

/** The otpauth:// URI an authenticator app scans (as a QR code) or takes pasted. */
export function totpUri(secret: string, account: string, issuer = "Stablegate"): string {
  return `otpauth://totp/${encodeURIComponent(`${issuer}:${account}`)}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${DIGITS}&period=${STEP_SECONDS}`;
}
