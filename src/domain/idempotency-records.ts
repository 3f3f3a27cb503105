// Idempotency records (.docs/api.md "REST conventions", Idempotency-Key): the first response to a key
// is stored for 24 h and replayed verbatim; the REST door (rest/idempotency.ts) presents the key and
// the request's fingerprint and calls these. Invariant: at most one request per key runs at a time; a
// claim left by a crashed request expires after CLAIM_MS so the key becomes usable again. A claim is
// ended (completed or released) only by the request holding it: one whose claim expired and was taken
// over touches nothing.
import type { Prisma } from "../db/client.js";
import { AppError } from "./errors.js";
import { inScope, type Scope } from "./scope.js";

const RETENTION_MS = 24 * 60 * 60 * 1000;
const CLAIM_MS = 60 * 1000;
/** Claims tried before a contended key is refused (each loses only to another request's claim or a prune). */
const CLAIM_ATTEMPTS = 3;

/** A running request's hold on its key: what ends it, and only it. */
export interface HeldKey {
  key: string;
  /** The claim's expiry as this request set it: a request that took the key over set another. */
  lockedUntil: Date;
}

/** The outcome of presenting a key: run the request, or send the stored response. */
export type IdempotencyClaim = { kind: "run"; held: HeldKey } | { kind: "replay"; status: number; body: string };

/** Claims `key` of `scope` for the request fingerprinted `requestHash`, or returns the response to replay; 409 when the key is in use or was used for another request. */
export async function claimIdempotencyKey(prisma: Prisma, scope: Scope, key: string, requestHash: string): Promise<IdempotencyClaim> {
  const id = { merchantId_livemode_key: { ...inScope(scope), key } };
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const now = new Date();
    const lockedUntil = new Date(now.getTime() + CLAIM_MS);
    const { count } = await prisma.idempotencyRecord.createMany({
      data: [{ ...inScope(scope), key, requestHash, lockedUntil }],
      skipDuplicates: true,
    });
    if (count === 1) return { kind: "run", held: { key, lockedUntil } };
    const record = await prisma.idempotencyRecord.findUnique({ where: id });
    if (!record) continue; // pruned between the two statements
    if (now.getTime() - record.createdAt.getTime() > RETENTION_MS) {
      await prisma.idempotencyRecord.deleteMany({ where: { ...inScope(scope), key, createdAt: record.createdAt } });
      continue;
    }
    if (record.requestHash !== requestHash) {
      throw new AppError(
        "idempotency_key_reused",
        `Idempotency-Key '${key}' was already used with a different request; use a new key for a new request`,
        "Idempotency-Key",
      );
    }
    if (record.responseStatus !== null && record.responseBody !== null) {
      return { kind: "replay", status: record.responseStatus, body: record.responseBody };
    }
    if (record.lockedUntil > now) {
      throw new AppError("idempotency_key_in_use", `A request with Idempotency-Key '${key}' is still being processed; retry shortly`, "Idempotency-Key");
    }
    // The previous holder died mid-request. Take over its claim, unless another retry just did.
    const { count: taken } = await prisma.idempotencyRecord.updateMany({
      where: { ...inScope(scope), key, lockedUntil: record.lockedUntil, responseStatus: null },
      data: { lockedUntil },
    });
    if (taken === 1) return { kind: "run", held: { key, lockedUntil } };
  }
  throw new AppError("idempotency_key_in_use", `Idempotency-Key '${key}' is contended; retry shortly`, "Idempotency-Key");
}

/** Stores the final response of the request holding `held`, for replay. */
export async function completeIdempotencyKey(prisma: Prisma, scope: Scope, held: HeldKey, status: number, body: string): Promise<void> {
  await prisma.idempotencyRecord.updateMany({
    where: { ...inScope(scope), ...held, responseStatus: null },
    data: { responseStatus: status, responseBody: body },
  });
}

/**
 * Frees a key whose request did not run to an answer worth replaying (refused input, a failure of
 * ours, a rate limit), so the same key can carry the request again.
 */
export async function releaseIdempotencyKey(prisma: Prisma, scope: Scope, held: HeldKey): Promise<void> {
  await prisma.idempotencyRecord.deleteMany({ where: { ...inScope(scope), ...held, responseStatus: null } });
}

/** Deletes records past their 24 h retention; returns how many. */
export async function pruneIdempotencyRecords(prisma: Prisma, now = new Date()): Promise<number> {
  const { count } = await prisma.idempotencyRecord.deleteMany({ where: { createdAt: { lt: new Date(now.getTime() - RETENTION_MS) } } });
  return count;
}
