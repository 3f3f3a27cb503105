// Idempotency-Key support: the first response to a key is stored for 24 h and replayed verbatim.
// Invariant: at most one request per key runs at a time; a claim left by a crashed request
// expires after CLAIM_MS so the key becomes usable again. A claim is ended (completed or released)
// only by the request holding it: one whose claim expired and was taken over touches nothing.
import { createHash } from "node:crypto";
import type { Prisma } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import { inScope, type Scope } from "../domain/scope.js";

const RETENTION_MS = 24 * 60 * 60 * 1000;
const CLAIM_MS = 60 * 1000;

/** A running request's hold on its key: what ends it, and only it. */
export interface HeldKey {
  key: string;
  /** The claim's expiry as this request set it: a request that took the key over set another. */
  lockedUntil: Date;
}

/** The outcome of presenting a key: run the request, or send the stored response. */
export type IdempotencyClaim = { kind: "run"; held: HeldKey } | { kind: "replay"; status: number; body: string };

/**
 * Fingerprint of a request, so a key reused for a different request is caught. The body counts as
 * canonical JSON: a client that rebuilds the same body with its keys in another order on retry is
 * sending the same request.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${JSON.stringify(canonical(body ?? null))}`)
    .digest("hex");
}

/** `value` with every object's keys sorted, at any depth; arrays keep their order, which means something. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((k) => [k, canonical(object[k])]),
  );
}

/** Stores and replays responses per (merchant, mode, key). */
export class IdempotencyStore {
  constructor(private readonly prisma: Prisma) {}

  /** Claims `key` for this request or returns the response to replay. */
  async claim(scope: Scope, key: string, requestHash: string): Promise<IdempotencyClaim> {
    if (key.length === 0 || key.length > 255) {
      throw new AppError("parameter_invalid", "Idempotency-Key must be 1-255 characters", "Idempotency-Key");
    }
    const id = { merchantId_livemode_key: { ...inScope(scope), key } };
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = new Date();
      const lockedUntil = new Date(now.getTime() + CLAIM_MS);
      const { count } = await this.prisma.idempotencyRecord.createMany({
        data: [{ ...inScope(scope), key, requestHash, lockedUntil }],
        skipDuplicates: true,
      });
      if (count === 1) return { kind: "run", held: { key, lockedUntil } };
      const record = await this.prisma.idempotencyRecord.findUnique({ where: id });
      if (!record) continue; // pruned between the two statements
      if (now.getTime() - record.createdAt.getTime() > RETENTION_MS) {
        await this.prisma.idempotencyRecord.deleteMany({ where: { ...inScope(scope), key, createdAt: record.createdAt } });
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
      const { count: taken } = await this.prisma.idempotencyRecord.updateMany({
        where: { ...inScope(scope), key, lockedUntil: record.lockedUntil, responseStatus: null },
        data: { lockedUntil },
      });
      if (taken === 1) return { kind: "run", held: { key, lockedUntil } };
    }
    throw new AppError("idempotency_key_in_use", `Idempotency-Key '${key}' is contended; retry shortly`, "Idempotency-Key");
  }

  /** Stores the final response for replay. */
  async complete(scope: Scope, held: HeldKey, status: number, body: string): Promise<void> {
    await this.prisma.idempotencyRecord.updateMany({
      where: { ...inScope(scope), ...held, responseStatus: null },
      data: { responseStatus: status, responseBody: body },
    });
  }

  /**
   * Frees a key whose request did not run to an answer worth replaying (refused input, a failure of
   * ours, a rate limit), so the same key can carry the request again.
   */
  async release(scope: Scope, held: HeldKey): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { ...inScope(scope), ...held, responseStatus: null } });
  }

  /** Deletes records past their 24 h retention. */
  async prune(): Promise<number> {
    const { count } = await this.prisma.idempotencyRecord.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - RETENTION_MS) } } });
    return count;
  }
}
