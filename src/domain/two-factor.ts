// Second factors after the password (.docs/dashboard.md "Safety rails"): a code from the user's authenticator
// app, or one of its ten one-time recovery codes for when the app is lost. Each is good once: the
// last accepted TOTP step is kept per user and moved forward by one compare-and-set statement, so a
// code seen over a shoulder, or sent twice at once, passes once; a recovery code's row is deleted as
// it is used. Only the recovery codes' SHA-256 is stored.
import { createHash, randomBytes } from "node:crypto";
import type { Prisma } from "../db/client.js";
import type { Prisma as P, User } from "../generated/prisma/client.js";
import type { Confirmation } from "./confirmation.js";
import { AppError } from "./errors.js";
import { totpStep } from "./totp.js";

/** How many recovery codes a user gets at a time. */
export const RECOVERY_CODE_COUNT = 10;
/** Crockford's base32 (no i, l, o, u): codes are read off paper and typed. */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** A code as it is compared: lower case, without the spaces and dashes people type. */
function normalize(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, "");
}

function hashRecoveryCode(code: string): string {
  return createHash("sha256").update(normalize(code)).digest("hex");
}

/** A new recovery code: 10 random base32 characters (50 bits) as `xxxxx-xxxxx`. */
function newRecoveryCode(): string {
  const chars = [...randomBytes(10)].map((b) => ALPHABET[b & 31]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** Ten new recovery codes for `userId`, replacing any it had: returned this once, stored as hashes. */
export async function issueRecoveryCodes(db: Prisma | P.TransactionClient, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.recoveryCode.deleteMany({ where: { userId } });
  await db.recoveryCode.createMany({ data: codes.map((code) => ({ userId, codeHash: hashRecoveryCode(code) })) });
  return codes;
}

/**
 * Replaces the recovery codes of a user with two-factor sign-in (the old ones stop working) once
 * `confirm` passes (a re-authentication from the dashboard); 400 when two-factor sign-in is off.
 */
export async function regenerateRecoveryCodes(prisma: Prisma, userId: string, confirm: Confirmation): Promise<string[]> {
  await confirm();
  return prisma.$transaction(async (tx) => {
    // The user's row lock orders this after a concurrent disableTotp, which drops the codes.
    const [user] = await tx.$queryRaw<{ totp_secret: string | null }[]>`SELECT totp_secret FROM users WHERE id = ${userId} FOR UPDATE`;
    if (!user?.totp_secret) throw new AppError("parameter_invalid", "Two-factor sign-in is off: turn it on first, which gives recovery codes.");
    return issueRecoveryCodes(tx, userId);
  });
}

/** How many unused recovery codes each of `userIds` has, in one read. */
export async function recoveryCodesRemaining(prisma: Prisma, userIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await prisma.recoveryCode.groupBy({ by: ["userId"], where: { userId: { in: [...userIds] } }, _count: { _all: true } });
  return new Map(rows.map((r) => [r.userId, r._count._all]));
}

/**
 * Accepts `code` of `secret` once for `userId`: the step it belongs to must be later than the last
 * one accepted, which it becomes. False for a wrong, replayed or older code.
 */
export async function acceptTotp(prisma: Prisma, userId: string, secret: string, code: string, now = new Date()): Promise<boolean> {
  const step = totpStep(secret, code, now.getTime());
  if (step === null) return false;
  // One UPDATE both compares and sets: of two requests with the same code, the second waits for the
  // first's row lock and then no longer matches.
  const { count } = await prisma.user.updateMany({
    where: { id: userId, OR: [{ totpLastStep: null }, { totpLastStep: { lt: step } }] },
    data: { totpLastStep: step },
  });
  return count === 1;
}

/**
 * Accepts a second factor of a user with two-factor sign-in: six digits are a TOTP code, anything
 * else a recovery code, consumed here. False when it is neither (wrong, used, or replayed).
 */
export async function acceptSecondFactor(prisma: Prisma, user: Pick<User, "id" | "totpSecret">, code: string, now = new Date()): Promise<boolean> {
  if (!user.totpSecret) return false;
  const given = normalize(code);
  if (/^\d{6}$/.test(given)) return acceptTotp(prisma, user.id, user.totpSecret, given, now);
  const { count } = await prisma.recoveryCode.deleteMany({ where: { userId: user.id, codeHash: hashRecoveryCode(given) } });
  return count === 1;
}
