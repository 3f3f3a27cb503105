// The webhook outbox as the dispatcher (jobs/webhook-dispatcher.ts) works it: claiming due deliveries
// under a lease, keeping the lease alive, and recording each attempt with the delivery's next state.
// The dispatcher only loops and sends; every write to the outbox is here.
//
// Invariants:
// - a delivery is claimed with FOR UPDATE SKIP LOCKED and a lease (a random token and an expiry the
//   claimer keeps renewing while the request is in flight), in one statement, so no two dispatchers
//   ever send the same delivery at once; one that dies stops renewing and the delivery is taken over
//   when its lease runs out: delivered at least once, never lost;
// - an outcome is written only while the claimer still holds the lease: a resend that restarted the
//   delivery meanwhile wins, and the late outcome is kept as an attempt only;
// - the attempt row and the delivery's new state are one statement: no outcome without its record
//   (the attempts that finished together are recorded together, in one statement).
import type { Prisma } from "../db/client.js";
import type { JsonValue } from "../generated/prisma/internal/prismaNamespace.js";
import { nextAttemptAt } from "../webhooks/schedule.js";
import type { AttemptResult } from "../webhooks/send.js";

/** A claimed delivery with what is needed to send it. */
export interface ClaimedDelivery {
  eventId: string;
  endpointId: string;
  attempts: number;
  type: string;
  livemode: boolean;
  data: JsonValue;
  createdAt: Date;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** What to claim: at most `limit` deliveries, `perEndpoint` per endpoint, none of the `saturated` endpoints'. */
export interface ClaimRequest {
  token: string;
  now: Date;
  leaseUntil: Date;
  limit: number;
  perEndpoint: number;
  saturated: string[];
}

/** What became of one attempt: delivered, to be tried again, given up, or the endpoint answered 410 (and is to be disabled). */
export type DeliveryResult = "succeeded" | "retrying" | "failed" | "gone";

/** Claims due deliveries of enabled endpoints, oldest due first, under lease `token`. */
export function claimDueDeliveries(prisma: Prisma, c: ClaimRequest): Promise<ClaimedDelivery[]> {
  const { token, now, limit, perEndpoint } = c;
  // Candidates first (at most `perEndpoint` per endpoint, oldest due first), then locked: rows
  // another dispatcher holds are skipped, and the conditions are checked again under the lock.
  return prisma.$queryRaw<ClaimedDelivery[]>`
    UPDATE webhook_deliveries d SET lease = ${token}, lease_until = ${c.leaseUntil}
    FROM (
      SELECT d2.event_id, d2.endpoint_id FROM webhook_deliveries d2
      WHERE (d2.event_id, d2.endpoint_id) IN (
        SELECT event_id, endpoint_id FROM (
          SELECT c.event_id, c.endpoint_id, c.next_attempt_at,
                 row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS n
          FROM (
            -- The oldest due rows only (the partial index), however long the queue is.
            SELECT q.event_id, q.endpoint_id, q.next_attempt_at FROM webhook_deliveries q
            WHERE q.status = 'PENDING' AND q.next_attempt_at <= ${now} AND (q.lease_until IS NULL OR q.lease_until < ${now})
              AND NOT (q.endpoint_id = ANY(${c.saturated}))
            ORDER BY q.next_attempt_at LIMIT ${limit * perEndpoint}
          ) c JOIN webhook_endpoints w2 ON w2.id = c.endpoint_id AND w2.disabled_at IS NULL
        ) candidates
        WHERE n <= ${perEndpoint} ORDER BY next_attempt_at LIMIT ${limit}
      )
      AND d2.status = 'PENDING' AND d2.next_attempt_at <= ${now} AND (d2.lease_until IS NULL OR d2.lease_until < ${now})
      FOR UPDATE OF d2 SKIP LOCKED
    ) due, events e, webhook_endpoints w
    WHERE d.event_id = due.event_id AND d.endpoint_id = due.endpoint_id AND e.id = d.event_id AND w.id = d.endpoint_id
    RETURNING d.event_id AS "eventId", d.endpoint_id AS "endpointId", d.attempts, e.type, e.livemode, e.data, e.created_at AS "createdAt",
      w.url, w.secret, w.previous_secret AS "previousSecret", w.previous_secret_expires_at AS "previousSecretExpiresAt"`;
}

/** Extends the leases `tokens` of requests still in flight until `until`. */
export async function renewDeliveryLeases(prisma: Prisma, tokens: string[], until: Date): Promise<void> {
  await prisma.$executeRaw`UPDATE webhook_deliveries SET lease_until = ${until} WHERE lease = ANY(${tokens})`;
}

/** One attempt of a claimed delivery as it is recorded: under which lease, when it started, what came of it and when it is due again (`attemptOutcome`). */
export interface DeliveryAttempt {
  delivery: ClaimedDelivery;
  token: string;
  started: Date;
  result: AttemptResult;
  retryAt: Date | null;
}

/** What becomes of delivery `d` after attempt `result` at `now`: delivered, due again by the retry schedule, or given up. */
export function attemptOutcome(d: ClaimedDelivery, result: AttemptResult, now: Date, random: () => number): { outcome: DeliveryResult; retryAt: Date | null } {
  const retryAt = result.succeeded || result.gone ? null : nextAttemptAt(d.attempts + 1, now, random);
  const outcome = result.succeeded ? "succeeded" : result.gone ? "gone" : retryAt ? "retrying" : "failed";
  return { outcome, retryAt };
}

/**
 * Records `attempts` and moves each delivery on (delivered, due again, or given up),
 * where its lease token still holds it: one statement for all of them.
 */
export async function recordDeliveryAttempts(prisma: Prisma, attempts: readonly DeliveryAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  const rows = attempts.map(({ delivery: d, token, started, result, retryAt }) => ({
    event_id: d.eventId,
    endpoint_id: d.endpointId,
    token,
    started,
    status_code: result.statusCode,
    latency_ms: result.latencyMs,
    error: result.error,
    succeeded: result.succeeded,
    response_body: result.responseBody,
    status: result.succeeded ? "SUCCEEDED" : retryAt ? "PENDING" : "FAILED",
    attempts: d.attempts + 1,
    next_at: retryAt ?? started,
  }));
  await prisma.$executeRaw`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(event_id text, endpoint_id text, token text, started timestamptz,
        status_code int, latency_ms int, error text, succeeded boolean, response_body text, status text, attempts int, next_at timestamptz)
    ), attempt AS (
      INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status_code, latency_ms, error, succeeded, response_body)
      -- A delivery deleted meanwhile (its endpoint was) keeps no attempt.
      SELECT v.event_id, v.endpoint_id, v.started, v.status_code, v.latency_ms, v.error, v.succeeded, v.response_body
      FROM v JOIN webhook_deliveries x ON x.event_id = v.event_id AND x.endpoint_id = v.endpoint_id
    )
    UPDATE webhook_deliveries d SET status = v.status::"DeliveryStatus", attempts = v.attempts, next_attempt_at = v.next_at,
      lease = NULL, lease_until = NULL, updated_at = now()
    FROM v WHERE d.event_id = v.event_id AND d.endpoint_id = v.endpoint_id AND d.lease = v.token`;
}
