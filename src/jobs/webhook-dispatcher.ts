// The webhook dispatcher: takes due deliveries from the outbox, sends them, and has every attempt
// recorded and the next scheduled (domain/webhook-deliveries.ts keeps the outbox's invariants: claims
// under a lease, outcomes only while the lease holds). Any number of dispatchers (worker processes, or
// the all-in-one server) can run on one database. At most `perEndpoint` requests per endpoint are in
// flight per dispatcher, so an endpoint that hangs for its 15 s holds a few slots, not all of them.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { eventResource, onQueuedDeliveries, webhookBody } from "../domain/events.js";
import {
  attemptOutcome,
  type ClaimedDelivery,
  claimDueDeliveries,
  type DeliveryAttempt,
  type DeliveryResult,
  recordDeliveryAttempts,
  renewDeliveryLeases,
} from "../domain/webhook-deliveries.js";
import { disableGoneEndpoint, signingSecrets } from "../domain/webhook-endpoints.js";
import { GroupCommit } from "../lib/group-commit.js";
import { type AttemptResult, postWebhook, WEBHOOK_TIMEOUT_MS } from "../webhooks/send.js";
import { webhookHeaders } from "../webhooks/signature.js";
import { checkWebhookTarget, isNonPublicAddress, type Resolver, systemResolver, WebhookTargetError } from "../webhooks/target-guard.js";
import { startLeasedLoop, Tally } from "./leased-loop.js";

export type { DeliveryResult };

export interface DispatcherOptions {
  /** The scheduling clock (injectable to test the retry schedule); the signature uses real time. */
  now?: () => Date;
  /** How often an idle dispatcher looks for due deliveries (at once when this process queues deliveries, or another rings). */
  intervalMs?: number;
  /** Most requests in flight at once. */
  concurrency?: number;
  /** Most requests in flight to one endpoint, so one that hangs cannot take every slot. */
  perEndpoint?: number;
  /** Per-request time limit (.docs/webhooks.md "The request your endpoint receives": 15 s). */
  timeoutMs?: number;
  /** How long a claim holds without renewal; a dead dispatcher's deliveries wait this long. */
  leaseMs?: number;
  /**
   * Whether the answer of a non-public address (test mode may post to one) is kept for the merchant to
   * read: true outside production (a local receiver while developing); in production only its status
   * is, or every merchant could read the operator's internal services through a test endpoint.
   */
  keepPrivateResponses?: boolean;
  resolve?: Resolver;
  random?: () => number;
  /** Told each attempt's result once it is recorded (/metrics counts them). */
  onResult?: (result: DeliveryResult) => void;
  /**
   * Rings from other processes that queued deliveries (realtime/doorbell.ts, with Redis): it
   * calls its argument on each and returns the function that stops listening.
   */
  doorbell?: (ring: () => void) => () => void;
}

/** A running dispatcher. */
export interface Dispatcher {
  /** Stops claiming and resolves once the requests in flight are done and recorded. */
  stop(): Promise<void>;
}

/** The options with their defaults filled in, and the dispatcher's logger. */
type Settings = Required<Omit<DispatcherOptions, "onResult" | "doorbell">> & Pick<DispatcherOptions, "onResult"> & { log: Logger };

function settingsOf(logger: Logger, o: DispatcherOptions): Settings {
  return {
    now: o.now ?? (() => new Date()),
    intervalMs: o.intervalMs ?? 50,
    concurrency: o.concurrency ?? 100,
    perEndpoint: o.perEndpoint ?? 10,
    timeoutMs: o.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    leaseMs: o.leaseMs ?? 10_000,
    keepPrivateResponses: o.keepPrivateResponses ?? true,
    resolve: o.resolve ?? systemResolver,
    random: o.random ?? Math.random,
    onResult: o.onResult,
    log: logger.child({ job: "webhooks" }),
  };
}

/** Signs and posts one delivery; a target the guard refuses is a failed attempt, not an error. */
async function attempt(s: Settings, d: ClaimedDelivery, started: Date): Promise<AttemptResult> {
  const body = webhookBody(eventResource({ id: d.eventId, type: d.type, createdAt: d.createdAt, livemode: d.livemode, data: d.data }));
  try {
    // Checked before every attempt, not only when saved: DNS may point elsewhere by now.
    const target = await checkWebhookTarget(d.url, d.livemode, s.resolve);
    const headers = webhookHeaders(d.eventId, Math.floor(Date.now() / 1000), body, signingSecrets(d, started));
    const result = await postWebhook(target, headers, body, s.timeoutMs);
    return s.keepPrivateResponses || !isNonPublicAddress(target.address) ? result : { ...result, responseBody: null };
  } catch (e) {
    if (!(e instanceof WebhookTargetError)) throw e;
    return { statusCode: null, latencyMs: 0, error: `not sent: ${e.message}`, succeeded: false, gone: false, responseBody: null };
  }
}

/** One attempt of a claimed delivery, recorded under its lease `token` with the attempts that finished around it. */
async function deliver(prisma: Prisma, s: Settings, records: GroupCommit<DeliveryAttempt>, d: ClaimedDelivery, token: string): Promise<void> {
  const started = s.now();
  const result = await attempt(s, d, started);
  const { outcome, retryAt } = attemptOutcome(d, result, s.now(), s.random);
  await records.add({ delivery: d, token, started, result, retryAt });
  s.onResult?.(outcome);
  if (outcome === "gone") {
    await disableGoneEndpoint(prisma, d.endpointId, started, s.now());
    // The endpoint's id, not its URL: a URL may carry the merchant's token in its query.
    s.log.warn({ endpoint: d.endpointId }, "webhook endpoint answered 410 Gone; disabled");
  } else if (outcome !== "succeeded") {
    s.log.warn(
      { event: d.eventId, endpoint: d.endpointId, error: result.error, retryAt },
      retryAt ? "webhook attempt failed" : "webhook delivery failed for good",
    );
  }
}

/** Starts dispatching due deliveries until stopped. */
export function startWebhookDispatcher(prisma: Prisma, logger: Logger, options: DispatcherOptions = {}): Dispatcher {
  const s = settingsOf(logger, options);
  /** Requests in flight per endpoint. */
  const busy = new Tally();
  const records = new GroupCommit((attempts: DeliveryAttempt[]) => recordDeliveryAttempts(prisma, attempts));
  const loop = startLeasedLoop<ClaimedDelivery>({
    log: s.log,
    what: "webhook deliveries",
    now: s.now,
    concurrency: s.concurrency,
    // Claims are made for a few free slots at a time, not one query per finished request.
    claimBatch: Math.max(1, Math.min(10, Math.floor(s.concurrency / 10))),
    intervalMs: s.intervalMs,
    workMs: s.timeoutMs,
    leaseMs: s.leaseMs,
    claim: (c) => claimDueDeliveries(prisma, { ...c, perEndpoint: s.perEndpoint, saturated: busy.atLeast(s.perEndpoint) }),
    renew: (tokens, until) => renewDeliveryLeases(prisma, tokens, until),
    work: (d, token) => deliver(prisma, s, records, d, token),
    context: (d) => ({ event: d.eventId, endpoint: d.endpointId }),
    started: (d) => busy.add(d.endpointId),
    done: (d) => busy.add(d.endpointId, -1),
  });
  // Deliveries this process queues are claimed at once, not at the next interval: the interval bounds
  // only the wait for what another process queues without a doorbell (and for retries falling due).
  const unlisten = onQueuedDeliveries(prisma, () => loop.ring());
  const stopListening = options.doorbell?.(() => loop.ring());
  return {
    async stop() {
      unlisten();
      stopListening?.();
      await loop.stop();
    },
  };
}
