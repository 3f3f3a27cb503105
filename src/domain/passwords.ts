// Dashboard passwords, hashed with scrypt (memory-hard, in node:crypto): stored as
// `scrypt$N$r$p$salt$hash`, so the cost can be raised later without breaking stored hashes.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/** scrypt's cost: 2^15 × 8 × 128 bytes = 32 MiB of memory per hash, about 50–100 ms of one core. */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;

/** A password: 10–200 characters; length is what makes it strong. */
export const passwordSchema = z.string().min(10, "must be at least 10 characters").max(200, "must be at most 200 characters");

function derive(password: string, salt: Buffer, cost: typeof COST): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    // scrypt refuses work above maxmem; twice what the cost needs leaves room for its own overhead.
    scrypt(password.normalize("NFKC"), salt, KEY_BYTES, { ...cost, maxmem: 256 * cost.N * cost.r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** The stored form of `password`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, COST);
  return ["scrypt", COST.N, COST.r, COST.p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

/** Whether `password` matches `stored` (a hashPassword result), in time that does not depend on where they differ. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await derive(password, Buffer.from(salt, "base64url"), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;

/** A hash no password matches: checked when an email is unknown, so that sign-in takes as long either way. */
export function dummyHash(): Promise<string> {
  return (dummy ??= hashPassword(randomBytes(16).toString("hex")));
}
