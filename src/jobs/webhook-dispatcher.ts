// The webhook dispatcher: takes due deliveries from the outbox, sends them, records every attempt
// and schedules the next. Any number of dispatchers (worker processes, or the all-in-one server)
// can run on one database.
//
// Invariants:
// - a delivery is claimed with FOR UPDATE SKIP LOCKED and a lease (a random token and an expiry the
//   claimer keeps renewing while the request is in flight), so no two dispatchers ever send the
//   same delivery at once; one that dies stops renewing and the delivery is taken over when its
//   lease runs out: delivered at least once, never lost;
// - an outcome is written only while the claimer still holds the lease: a resend that restarted the
//   delivery meanwhile wins, and the late outcome is kept as an attempt only;
// - the attempt row and the delivery's new state are one statement: no outcome without its record;
// - at most `perEndpoint` requests per endpoint are in flight per dispatcher, so an endpoint that
//   hangs for its 15 s holds a few slots, not all of them.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { eventResource } from "../domain/events.js";
import type { JsonValue } from "../generated/prisma/internal/prismaNamespace.js";
import { randomBase62 } from "../domain/ids.js";
import { signingSecrets } from "../domain/webhook-endpoints.js";
import { nextAttemptAt } from "../webhooks/schedule.js";
import { type AttemptResult, postWebhook, WEBHOOK_TIMEOUT_MS } from "../webhooks/send.js";
import { webhookHeaders } from "../webhooks/signature.js";
import { checkWebhookTarget, type Resolver, systemResolver, WebhookTargetError } from "../webhooks/target-guard.js";

export interface DispatcherOptions {
  /** The scheduling clock (injectable to test the retry schedule); the signature uses real time. */
  now?: () => Date;
  /** How often an idle dispatcher looks for due deliveries. */
  intervalMs?: number;
  /** Most requests in flight at once. */
  concurrency?: number;
  /** Most requests in flight to one endpoint, so one that hangs cannot take every slot. */
  perEndpoint?: number;
  /** Per-request time limit (.docs/webhooks.md "The request your endpoint receives": 15 s). */
  timeoutMs?: number;
  /** How long a claim holds without renewal; a dead dispatcher's deliveries wait this long. */
  leaseMs?: number;
  resolve?: Resolver;
  random?: () => number;
  /** Told each attempt's result once it is recorded (/metrics counts them). */
  onResult?: (result: DeliveryResult) => void;
}

/** What became of one attempt: delivered, to be tried again, given up, or the endpoint answered 410 and was disabled. */
export type DeliveryResult = "succeeded" | "retrying" | "failed" | "gone";

/** A running dispatcher. */
export interface Dispatcher {
  /** Stops claiming and resolves once the requests in flight are done and recorded. */
  stop(): Promise<void>;
}

/** A claimed delivery with what is needed to send it. */
interface Claimed {
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

/** Starts dispatching due deliveries until stopped. */
export function startWebhookDispatcher(prisma: Prisma, logger: Logger, options: DispatcherOptions = {}): Dispatcher {
  const clock = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? 50;
  const concurrency = options.concurrency ?? 100;
  const perEndpoint = options.perEndpoint ?? 10;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const leaseMs = options.leaseMs ?? 10_000;
  const resolve = options.resolve ?? systemResolver;
  const random = options.random ?? Math.random;
  const log = logger.child({ job: "webhooks" });

  let stopped = false;
  let inFlight = 0;
  /** Claim tokens with requests still in flight, and how many each has. */
  const leases = new Map<string, number>();
  /** Requests in flight per endpoint. */
  const busy = new Map<string, number>();
  let wake: (() => void) | null = null;
  const kick = () => wake?.();
  const pause = (ms: number) =>
    new Promise<void>((r) => {
      const timer = setTimeout(r, ms);
      wake = () => {
        clearTimeout(timer);
        r();
      };
    }).finally(() => (wake = null));

  async function claim(limit: number): Promise<{ token: string; rows: Claimed[] }> {
    const token = randomBase62(20);
    const now = clock();
    const saturated = [...busy].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
    // Candidates first (at most `perEndpoint` per endpoint, oldest due first), then locked: rows
    // another dispatcher holds are skipped, and the conditions are checked again under the lock.
    const rows = await prisma.$queryRaw<Claimed[]>`
      UPDATE webhook_deliveries d SET lease = ${token}, lease_until = ${new Date(now.getTime() + leaseMs)}
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
                AND NOT (q.endpoint_id = ANY(${saturated}))
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
    return { token, rows };
  }

  async function attempt(d: Claimed, started: Date): Promise<AttemptResult> {
    const body = JSON.stringify(eventResource({ id: d.eventId, type: d.type, createdAt: d.createdAt, livemode: d.livemode, data: d.data }));
    try {
      // Checked before every attempt, not only when saved: DNS may point elsewhere by now.
      const target = await checkWebhookTarget(d.url, d.livemode, resolve);
      const headers = webhookHeaders(d.eventId, Math.floor(Date.now() / 1000), body, signingSecrets(d, started));
      return await postWebhook(target, headers, body, timeoutMs);
    } catch (e) {
      if (!(e instanceof WebhookTargetError)) throw e;
      return { statusCode: null, latencyMs: 0, error: `not sent: ${e.message}`, succeeded: false, gone: false };
    }
  }

  async function deliver(d: Claimed, token: string): Promise<void> {
    const started = clock();
    const result = await attempt(d, started);
    const failed = d.attempts + 1;
    const retryAt = result.succeeded || result.gone ? null : nextAttemptAt(failed, clock(), random);
    const status = result.succeeded ? "SUCCEEDED" : retryAt ? "PENDING" : "FAILED";
    await prisma.$executeRaw`
      WITH attempt AS (
        INSERT INTO webhook_attempts (event_id, endpoint_id, attempted_at, status_code, latency_ms, error, succeeded)
        VALUES (${d.eventId}, ${d.endpointId}, ${started}, ${result.statusCode}, ${result.latencyMs}, ${result.error}, ${result.succeeded})
      )
      UPDATE webhook_deliveries SET status = ${status}::"DeliveryStatus", attempts = ${failed}, next_attempt_at = ${retryAt ?? started},
        lease = NULL, lease_until = NULL, updated_at = now()
      WHERE event_id = ${d.eventId} AND endpoint_id = ${d.endpointId} AND lease = ${token}`;
    options.onResult?.(result.succeeded ? "succeeded" : result.gone ? "gone" : retryAt ? "retrying" : "failed");
    if (result.gone) {
      await prisma.webhookEndpoint.updateMany({
        where: { id: d.endpointId, disabledAt: null },
        data: { disabledAt: clock(), disabledReason: `the endpoint answered 410 Gone on ${started.toISOString()}` },
      });
      // The endpoint's id, not its URL: a URL may carry the merchant's token in its query.
      log.warn({ endpoint: d.endpointId }, "webhook endpoint answered 410 Gone; disabled");
    } else if (!result.succeeded) {
      log.warn(
        { event: d.eventId, endpoint: d.endpointId, error: result.error, retryAt },
        retryAt ? "webhook attempt failed" : "webhook delivery failed for good",
      );
    }
  }

  function launch(d: Claimed, token: string) {
    inFlight++;
    busy.set(d.endpointId, (busy.get(d.endpointId) ?? 0) + 1);
    deliver(d, token)
      .catch((e) =>
        log.error({ err: e, event: d.eventId, endpoint: d.endpointId }, "webhook delivery could not be recorded; it will be retried when its lease ends"),
      )
      .finally(() => {
        inFlight--;
        const open = busy.get(d.endpointId)! - 1;
        if (open === 0) busy.delete(d.endpointId);
        else busy.set(d.endpointId, open);
        const left = leases.get(token)! - 1;
        if (left === 0) leases.delete(token);
        else leases.set(token, left);
        kick();
      });
  }

  // Keeps the leases of requests in flight alive; a dispatcher that dies stops renewing them.
  const renewal = setInterval(() => {
    if (leases.size === 0) return;
    const until = new Date(clock().getTime() + leaseMs);
    prisma.$executeRaw`UPDATE webhook_deliveries SET lease_until = ${until} WHERE lease = ANY(${[...leases.keys()]})`.catch((e) =>
      log.error({ err: e }, "could not renew webhook leases"),
    );
  }, leaseMs / 3);

  // Claims are made for a few free slots at a time, not one query per finished request.
  const claimBatch = Math.max(1, Math.min(10, Math.floor(concurrency / 10)));
  const loop = (async () => {
    while (!stopped) {
      const free = concurrency - inFlight;
      if (free < claimBatch) {
        await pause(timeoutMs);
        continue;
      }
      let claimed: number;
      try {
        const { token, rows } = await claim(free);
        claimed = rows.length;
        if (claimed > 0) leases.set(token, claimed);
        for (const row of rows) launch(row, token);
      } catch (e) {
        log.error({ err: e }, "could not claim webhook deliveries");
        await pause(1000);
        continue;
      }
      // A full batch means more may be due: go again as soon as a slot is free.
      if (stopped) break;
      if (claimed < free) await pause(intervalMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      kick();
      await loop;
      while (inFlight > 0) await pause(timeoutMs);
      clearInterval(renewal);
    },
  };
}
