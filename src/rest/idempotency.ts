// Idempotency-Key support at the REST door: the header is checked and the request fingerprinted here;
// the records (claim, replay, retention) are domain/idempotency-records.ts.
import { createHash } from "node:crypto";
import type { Prisma } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type HeldKey,
  type IdempotencyClaim,
  pruneIdempotencyRecords,
  releaseIdempotencyKey,
} from "../domain/idempotency-records.js";
import type { Scope } from "../domain/scope.js";

export type { HeldKey, IdempotencyClaim };

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

/** The door's idempotency records per (merchant, mode, key), on its database. */
export class IdempotencyStore {
  constructor(private readonly prisma: Prisma) {}

  /** Claims `key` for this request or returns the response to replay; 400 for a key of the wrong length. */
  async claim(scope: Scope, key: string, requestHash: string): Promise<IdempotencyClaim> {
    if (key.length === 0 || key.length > 255) {
      throw new AppError("parameter_invalid", "Idempotency-Key must be 1-255 characters", "Idempotency-Key");
    }
    return claimIdempotencyKey(this.prisma, scope, key, requestHash);
  }

  /** Stores the final response for replay. */
  complete(scope: Scope, held: HeldKey, status: number, body: string): Promise<void> {
    return completeIdempotencyKey(this.prisma, scope, held, status, body);
  }

  /** Frees a key whose request did not run to an answer worth replaying (see releaseIdempotencyKey). */
  release(scope: Scope, held: HeldKey): Promise<void> {
    return releaseIdempotencyKey(this.prisma, scope, held);
  }

  /** Deletes records past their 24 h retention. */
  prune(): Promise<number> {
    return pruneIdempotencyRecords(this.prisma);
  }
}
