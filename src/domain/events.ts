// The event log and the webhook outbox. An event row is written in the same transaction as the
// change it reports, and so are its deliveries (one per enabled endpoint of the merchant and mode
// that wants its type): an event exists, and will be delivered, exactly when its change committed.
// The dispatcher (jobs/webhook-dispatcher.ts) sends the deliveries.
//
// Event ids are facts, not accidents. An event that a chain fact or the chains' clock causes can be
// derived again: after a restore (the indexer re-reads the blocks since the backup), a reorg replay
// or a crash between reading and committing. Such an event carries its `cause` and its id is derived
// from merchant, mode, type, the object's id and that cause, so the same fact always gives the same
// `evt_` id, hence the same webhook-id, and recording an id that exists is a no-op (no second row, no
// second delivery). The causes (domain/payments.ts, charges/expire.ts, reversals.ts):
//   charge.partial, received, late_payment, payout_confirmed, refund.completed, and invoice.paid or
//     invoice.updated by a payment: the chain transfer that decided them (chain, fact key, and how
//     many times a reorg reversed that fact before: a payment re-included after a reversal is news)
//   charge.completed: the transition RECEIVED→COMPLETED, made once per charge (COMPLETED is final)
//   charge.expired, charge.underpaid: the transition PENDING→EXPIRED, made once per charge, whether
//     the chains' clock or a payment past the expiry decided it
//   refund.updated by a reorg: the fact it took away, and which reversal of it that was
// Every other event keeps a random id: an API request (create, pick, cancel, review, refunds,
// invoices, customers) is not replayed by a restore, and a payout block or a review flag reports the
// relayer's or the reconciliation's finding of the moment, which may rightly be reported again.
import { z } from "zod";
import { type Prisma, selectRows } from "../db/client.js";
import type { Event } from "../generated/prisma/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { AppError, notFound } from "./errors.js";
import { EVENT_OBJECT_TYPES, EVENT_TYPES, type EventFilters, type EventListQuery } from "./event-requests.js";
import { derivedId, newId } from "./ids.js";
import { beyond, keysetPage, keysetSql, type Page, type PageEnd } from "./paging.js";
import { addressResource } from "./postal-address.js";
import { inScope, modeName, type Scope } from "./scope.js";

export type { Event };

// Defined with the requests that name them (a list's filter, a live stream's, a webhook endpoint's);
// the rest of the service finds them here with the events.
export { EVENT_OBJECT_TYPES, EVENT_TYPES };

export type EventType = (typeof EVENT_TYPES)[number];

/** The event types that report a change to a charge. */
export type ChargeEventType = Extract<EventType, `charge.${string}`>;

/** When each event is sent: the webhooks' descriptions in the OpenAPI document, and the GraphQL enum's. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  "charge.pending": "A charge was created (PENDING): its hosted page waits for the buyer.",
  "charge.chain_selected": "The buyer picked a chain on the hosted page: the charge has its cloneAddress and a new expiresAt.",
  "charge.partial":
    "Confirmed money arrived that does not cover the amount yet: the charge stays PENDING (its expiry pushed back, unless the money is dust). `payments` lists what arrived.",
  "charge.received":
    "Confirmed money covers the amount (or falls short within the underpayment tolerance: `underpaidAmount`): RECEIVED, and the payout to your wallet follows. `payments` lists what arrived.",
  "charge.completed":
    "The payout to your wallet is confirmed: COMPLETED, with feeAmount, netAmount, flushTxHash and completedAt. `overpaidAmount` is what was paid beyond the amount.",
  "charge.underpaid": "The charge expired with partial money: EXPIRED, and what arrived is paid out to your wallet.",
  "charge.expired": "The charge expired with nothing received: EXPIRED.",
  "charge.cancelled": "The charge was cancelled: CANCELLED; confirmed partial money (amountReceived) is paid out to your wallet.",
  "charge.late_payment":
    "Money arrived after the charge was EXPIRED, CANCELLED or COMPLETED: it is paid out to your wallet too. `payments` lists what arrived.",
  "charge.payout_confirmed": "A later payout (of underpaid or late money) is confirmed: the charge's money fields changed.",
  "charge.payout_blocked": "Money in the charge's address cannot be paid out now: payoutBlockedReason says why.",
  "charge.needs_review": "The reconciliation found that the ledger and the chain disagree about the charge: needsReview is true and reviewReason says what.",
  "charge.reviewed": "A charge that needed review was marked reviewed.",
  "customer.created": "A customer was created.",
  "customer.updated": "A customer was changed.",
  "customer.deleted": "A customer was deleted: `data` is the customer as it was, with `deleted: true`.",
  "refund.created": "A refund was created: AWAITING_ADDRESS until the buyer gives an address, else AWAITING_PAYMENT.",
  "refund.updated": "A refund changed: the buyer gave an address, or its payment changed on chain.",
  "refund.completed": "The transfer paying the refund from your settlement wallet is confirmed: COMPLETED.",
  "refund.cancelled": "A refund was cancelled.",
  "invoice.created": "An invoice was drafted (DRAFT).",
  "invoice.updated": "An invoice changed: a DRAFT was edited, or a payment counted towards it without settling it.",
  "invoice.finalized": "An invoice was finalized: OPEN, with its number and hostedInvoiceUrl.",
  "invoice.paid": "Payments settled the invoice: PAID.",
  "invoice.voided": "An invoice was voided: VOID.",
  "invoice.marked_uncollectible": "An invoice was marked uncollectible: UNCOLLECTIBLE (it can still be paid).",
  "invoice.deleted": "A DRAFT invoice was deleted: `data` is the invoice as it was, with `deleted: true`.",
  "invoice.upcoming": "A subscription renews in 3 days: `data` is the subscription (its next period and amount).",
  "invoice.payment_failed": "A subscription's pull for an OPEN invoice failed: `data` is the invoice; retries follow SUBSCRIPTION_RETRY_SCHEDULE.",
  "subscription.created": "A subscription was created (INCOMPLETE, with its checkoutUrl).",
  "subscription.updated": "A subscription's status or period changed (authorized, renewed, PAST_DUE and back, cancelAtPeriodEnd set).",
  "subscription.canceled": "A subscription ended: CANCELED, with cancelReason.",
  "x402.payment":
    "A payment to your x402 address was confirmed and is in the ledger: `data` is the x402 payment (payer, amount, network, txHash, and the resource paid for when settle relayed it).",
};

/** Every charge event type, in EVENT_TYPES order. */
export const CHARGE_EVENT_TYPES = EVENT_TYPES.filter((t): t is ChargeEventType => t.startsWith("charge."));

/** An event to record: whose, what kind, the object as it is after the change, and what caused it. */
export interface NewEvent {
  scope: Scope;
  type: EventType;
  data: object;
  /** The chain fact or transition that caused it (see the rule above): the same cause, the same id. Absent: a random id. */
  cause?: string;
}

/** The cause of charge.completed: the transition, which a charge makes once (COMPLETED is final). */
export const COMPLETION_CAUSE = "RECEIVED→COMPLETED";

/** The cause of charge.expired and charge.underpaid: the transition, which a charge makes once, whoever decides it. */
export const EXPIRY_CAUSE = "PENDING→EXPIRED";

/** The id of `e`: derived from its cause when it has one, else random. */
export function eventId(e: NewEvent): string {
  if (e.cause === undefined) return newId("evt");
  const objectId = (e.data as { id?: unknown }).id;
  return derivedId("evt", [e.scope.merchantId, e.scope.livemode ? "live" : "test", e.type, String(objectId), e.cause].join("\n"));
}

/** The public JSON form of an event: also the exact body of its webhooks. */
export const EventResource = z.object({
  id: z.string(),
  type: z.string().describe("What happened, e.g. charge.completed."),
  timestamp: z.string().describe("When the change was committed."),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  data: z.unknown().describe("The object as it was right after the change."),
});
export type EventResource = z.infer<typeof EventResource>;

/** An event as written: its public form and the merchant it belongs to (what live subscribers get). */
export interface RecordedEvent extends EventResource {
  merchantId: string;
}

/** Where committed events are announced (realtime/ implements it). Never throws; announcing is best effort. */
export interface EventFeed {
  /** Events whose write has committed, in the order they were recorded. */
  recorded(events: readonly RecordedEvent[]): void;
}

// Announcing every event once its write commits. Every event is written through recordEvents or
// eventWrites, and every write of one reports it to `eventsWritten` with the client it ran on (and
// how many webhook deliveries it queued): the root client has committed it already (one statement),
// a transaction's client keeps it until $transaction resolves. Invariants: an event is announced
// once, after its commit, never after a rollback (a rejected transaction's list is dropped with its
// client); the delivery doorbells ring only after a commit that queued deliveries.
interface Announcer {
  feed?: EventFeed;
  /** Told after each commit that queued webhook deliveries (doorbells: a dispatcher claims them at once). */
  listeners: Set<() => void>;
}
/** What a transaction wrote so far, announced when it commits. */
interface Written {
  events: RecordedEvent[];
  deliveries: number;
}
const announcers = new WeakMap<object, Announcer>();
const uncommitted = new WeakMap<object, Written>();

function announce(a: Announcer, events: readonly RecordedEvent[], deliveries: number): void {
  if (events.length > 0) a.feed?.recorded(events);
  if (deliveries > 0) for (const listener of a.listeners) listener();
}

/** The announcer of root client `prisma`, wrapping its $transaction on first use so a transaction's events are announced after it commits. */
function announcerOf(prisma: Prisma): Announcer {
  const known = announcers.get(prisma);
  if (known) return known;
  const a: Announcer = { listeners: new Set() };
  announcers.set(prisma, a);
  const transaction = prisma.$transaction.bind(prisma) as (arg: unknown, options?: unknown) => Promise<unknown>;
  const announcing = async (arg: unknown, options?: unknown) => {
    if (typeof arg !== "function") return transaction(arg, options);
    let client: object | undefined;
    const result = await transaction((tx: object) => {
      client = tx;
      return (arg as (tx: object) => unknown)(tx);
    }, options);
    const written = client && uncommitted.get(client);
    if (written) announce(a, written.events, written.deliveries);
    return result;
  };
  prisma.$transaction = announcing as Prisma["$transaction"];
  return a;
}

/** Announces to `feed` every event `prisma` commits from now on (the composition root calls it once per client; the latest feed wins). */
export function announceCommittedEvents(prisma: Prisma, feed: EventFeed): void {
  announcerOf(prisma).feed = feed;
}

/** Calls `listener` after every commit through `prisma` that queued webhook deliveries, until the returned function is called. */
export function onQueuedDeliveries(prisma: Prisma, listener: () => void): () => void {
  const { listeners } = announcerOf(prisma);
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Reports events written through `db` (the root client or a transaction's) and the webhook
 * deliveries their statement queued: announced once they have committed.
 */
export function eventsWritten(db: object, events: readonly RecordedEvent[], deliveries: number): void {
  if (events.length === 0 && deliveries === 0) return;
  const root = announcers.get(db);
  if (root) return announce(root, events, deliveries);
  const pending = uncommitted.get(db);
  if (pending) {
    pending.events.push(...events);
    pending.deliveries += deliveries;
  } else uncommitted.set(db, { events: [...events], deliveries });
}

/** Appends an event carrying `data` (the object as it is after the change) inside transaction `tx`. */
export async function recordEvent(tx: P.TransactionClient, scope: Scope, type: EventType, data: object): Promise<RecordedEvent> {
  const [event] = await recordEvents(tx, [{ scope, type, data }]);
  return event!;
}

/**
 * Appends events and their webhook deliveries inside transaction `tx`, in one statement whatever
 * their number. Returns the events written: one whose derived id exists already is left out.
 */
export async function recordEvents(tx: P.TransactionClient, events: NewEvent[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const writes = eventWrites(events);
  const rows = await tx.$queryRaw<{ id: string; queued: number }[]>`WITH ${writes.sql} SELECT id, ${QUEUED_DELIVERIES} AS queued FROM new_events`;
  const written = new Set(rows.map((r) => r.id));
  const recorded = writes.recorded.filter((e) => written.has(e.id));
  eventsWritten(tx, recorded, rows[0]?.queued ?? 0);
  return recorded;
}

/** In a statement with eventWrites' parts: how many webhook deliveries it queued (an int). */
export const QUEUED_DELIVERIES = P.sql`(SELECT count(*) FROM new_deliveries)::int`;

/**
 * The WITH-clause parts that append `events` and queue one delivery per enabled endpoint of the
 * merchant and mode that wants the type. A change written in the same statement (a hot path's single
 * round trip) commits with its events or not at all. The caller reports `recorded` and the deliveries
 * queued (QUEUED_DELIVERIES) to `eventsWritten` once the statement ran. With `onlyIf` (a condition on
 * the statement's other parts, such as a conditional insert's rows), the events go in only when it holds.
 */
export function eventWrites(events: NewEvent[], onlyIf?: P.Sql, at = new Date()): { sql: P.Sql; recorded: RecordedEvent[] } {
  // The timestamp is chosen here, not by the database, so what live subscribers are sent after the
  // commit is exactly the stored event (the column keeps milliseconds, as Date does). Events of one
  // change are a millisecond apart, so lists show them in the order they happened.
  const recorded = events.map((e, i) => ({
    id: eventId(e),
    type: e.type,
    timestamp: new Date(at.getTime() + i).toISOString(),
    livemode: e.scope.livemode,
    data: e.data,
    merchantId: e.scope.merchantId,
  }));
  const rows = recorded.map((e) => ({ id: e.id, merchant_id: e.merchantId, livemode: e.livemode, type: e.type, data: e.data, created_at: e.timestamp }));
  const sql = P.sql`
    new_events AS (
      INSERT INTO events (id, merchant_id, livemode, type, data, created_at)
      SELECT id, merchant_id, livemode, type, data, created_at FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS x(id text, merchant_id text, livemode boolean, type text, data jsonb, created_at timestamptz)
      ${onlyIf ? P.sql`WHERE ${onlyIf}` : P.empty}
      ON CONFLICT (id) DO NOTHING
      RETURNING id, merchant_id, livemode, type
    ),
    new_deliveries AS (
      INSERT INTO webhook_deliveries (event_id, endpoint_id)
      SELECT e.id, w.id FROM new_events e JOIN webhook_endpoints w
        ON w.merchant_id = e.merchant_id AND w.livemode = e.livemode AND w.disabled_at IS NULL
       AND (cardinality(w.event_types) = 0 OR e.type = ANY(w.event_types))
      RETURNING event_id
    )`;
  return { sql, recorded };
}

/** The exact body of a webhook carrying `e` (the dispatcher's and `stablegate listen`'s). */
export function webhookBody(e: EventResource): string {
  return JSON.stringify({ id: e.id, type: e.type, timestamp: e.timestamp, livemode: e.livemode, data: e.data });
}

/** Shapes a stored event as the API shows it and webhooks carry it. */
export function eventResource(e: Pick<Event, "id" | "type" | "createdAt" | "livemode" | "data">): EventResource {
  return { id: e.id, type: e.type, timestamp: e.createdAt.toISOString(), livemode: e.livemode, data: eventData(e.type, e.data) };
}

/**
 * An event's data as the resource is shaped today. A customer's snapshot recorded before REST's
 * address parts became strings holds null parts: read back (list, resend, retries, GraphQL) it is
 * shaped as a new one would be, so one schema describes every event.
 */
export function eventData(type: string, data: Event["data"]): Event["data"] {
  if (!type.startsWith("customer.") || data === null || typeof data !== "object" || Array.isArray(data) || !("address" in data)) return data;
  return { ...data, address: addressResource(data.address) };
}

/** The types an event list keeps (null: any): the one asked for, or every type of the object kind asked for. */
function typesOf(f: EventFilters): string[] | null {
  const types = EVENT_TYPES.filter((t) => (!f.type || t === f.type) && (!f.objectType || t.startsWith(`${f.objectType}.`)));
  return f.type || f.objectType ? types : null;
}

/** The where-clause of an event list without an object id: this merchant and mode, optionally some types. */
export function eventFilter(scope: Scope, f: EventFilters): P.EventWhereInput {
  const types = typesOf(f);
  return { merchantId: scope.merchantId, livemode: scope.livemode, ...(types && { type: { in: types } }) };
}

/** An event list's filters in SQL, for lists by object id: `data->>'id'` has an expression index (migration 20261201010000), which Prisma cannot write. */
function objectFilterSql(scope: Scope, f: EventFilters, objectId: string): P.Sql {
  const types = typesOf(f);
  return P.sql`merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} AND (data->>'id') = ${objectId}
    ${types ? P.sql`AND type = ANY(${types})` : P.empty}`;
}

/** How many events match the list filters (GraphQL's `totalCount`). */
export async function countEvents(prisma: Prisma, scope: Scope, f: EventFilters): Promise<number> {
  if (!f.objectId) return prisma.event.count({ where: eventFilter(scope, f) });
  const [row] = await prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM events WHERE ${objectFilterSql(scope, f, f.objectId)}`;
  return row!.count;
}

/** One page of events, newest first, with cursor pagination, filtered by type, object kind or object id. */
export async function listEvents(prisma: Prisma, scope: Scope, query: EventListQuery, end: PageEnd = "newest"): Promise<Page<Event>> {
  const { type, objectType, objectId, ...params } = query;
  const f = { type, objectType, objectId };
  const where = eventFilter(scope, f);
  return keysetPage(
    "event",
    params,
    (id) => prisma.event.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    objectId
      ? async (q) => {
          const keyset = keysetSql(q);
          const ids = await prisma.$queryRaw<{ id: string }[]>`
            SELECT id FROM events WHERE ${objectFilterSql(scope, f, objectId)} AND ${keyset.where} ${keyset.orderLimit}`;
          const rows = await prisma.event.findMany({ where: { id: { in: ids.map((r) => r.id) } } });
          const byId = new Map(rows.map((e) => [e.id, e]));
          return ids.flatMap((r) => byId.get(r.id) ?? []);
        }
      : (q) => prisma.event.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** The most events a charge's timeline shows. */
const TIMELINE_MAX = 200;

/** The events about each of `chargeIds`, oldest first: their timelines (the latest 200 of each), in one read. */
export async function eventsOfCharges(prisma: Prisma, scope: Scope, chargeIds: readonly string[]): Promise<Map<string, Event[]>> {
  // Each charge's newest events by the indexed expression (migration 20261201010000), which Prisma's
  // JSON path filter would not use; a lateral join keeps the per-charge limit in one statement.
  const newestFirst = await selectRows<Event & { chargeId: string }>(
    prisma,
    `SELECT c.id AS "chargeId", e.id, e.merchant_id AS "merchantId", e.livemode, e.type, e.data, e.created_at AS "createdAt"
      FROM unnest($3::text[]) AS c(id) CROSS JOIN LATERAL (
        SELECT * FROM events WHERE merchant_id = $1 AND livemode = $2 AND (data->>'id') = c.id AND type LIKE 'charge.%'
        ORDER BY created_at DESC, id DESC LIMIT ${TIMELINE_MAX}) e`,
    [scope.merchantId, scope.livemode, [...chargeIds]],
  );
  const timelines = new Map<string, Event[]>(chargeIds.map((id) => [id, []]));
  for (const { chargeId, ...event } of newestFirst.reverse()) timelines.get(chargeId)?.push(event);
  return timelines;
}

/**
 * The events of this merchant and mode at or after `since`, oldest first, of `types` (every type
 * when empty): at most `max`, read a page at a time.
 */
export async function eventsSince(prisma: Prisma, scope: Scope, types: readonly string[], since: Date, max = 5_000): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  const where: P.EventWhereInput = {
    merchantId: scope.merchantId,
    livemode: scope.livemode,
    ...(types.length > 0 && { type: { in: [...types] } }),
  };
  let cursor: { createdAt: Date; id: string } | null = null;
  while (out.length < max) {
    const page: Event[] = await prisma.event.findMany({
      where: {
        ...where,
        ...(cursor ? beyond(cursor, "newer") : { createdAt: { gte: since } }),
      },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: Math.min(500, max - out.length),
    });
    out.push(...page.map((e) => ({ ...eventResource(e), merchantId: e.merchantId })));
    if (page.length < 500) break;
    cursor = page[page.length - 1]!;
  }
  return out;
}

/** An event of this merchant and mode, or 404; `query` as a GraphQL selection gives it. */
export async function getEvent(prisma: Prisma, scope: Scope, id: string, query: { include?: P.EventInclude } = {}): Promise<Event> {
  const event = await prisma.event.findFirst({ ...query, where: { id, merchantId: scope.merchantId, livemode: scope.livemode } });
  if (!event) throw notFound("event", id);
  return event;
}

/** One delivery of an event to one endpoint, with every attempt, as the API shows it. */
export const DeliveryResource = z.object({
  endpointId: z.string().describe("The endpoint (whep_…)."),
  url: z.string().describe("The endpoint's URL."),
  status: z.enum(["pending", "succeeded", "failed"]).describe("Where the delivery is."),
  nextAttemptAt: z.string().nullable().describe("The next attempt of a pending delivery; null otherwise."),
  attempts: z
    .array(
      z.object({
        attemptedAt: z.string().describe("When it was made."),
        statusCode: z.number().int().nullable().describe("Null when no response came (timeout, connection refused, address not allowed)."),
        latencyMs: z.number().int().describe("How long the endpoint took to answer (or to fail)."),
        error: z.string().nullable().describe("Why no 2xx came; null when one did."),
        succeeded: z.boolean().describe("Whether the endpoint answered 2xx in time."),
        responseBody: z.string().nullable().describe("The first 2 KB of what the endpoint answered, as text; null when no response came."),
      }),
    )
    .describe("Every attempt so far, oldest first."),
});
export type DeliveryResource = z.infer<typeof DeliveryResource>;

/** The deliveries of each of `eventIds` with their attempts (oldest first), in two queries. */
export async function eventDeliveries(prisma: Prisma, eventIds: readonly string[]): Promise<Map<string, DeliveryResource[]>> {
  const [deliveries, attempts] = await Promise.all([
    prisma.webhookDelivery.findMany({
      where: { eventId: { in: [...eventIds] } },
      include: { endpoint: { select: { url: true } } },
      orderBy: [{ createdAt: "asc" }, { endpointId: "asc" }],
    }),
    prisma.webhookAttempt.findMany({ where: { eventId: { in: [...eventIds] } }, orderBy: { id: "asc" } }),
  ]);
  const byDelivery = new Map<string, DeliveryResource["attempts"]>();
  for (const a of attempts) {
    const key = `${a.eventId} ${a.endpointId}`;
    if (!byDelivery.has(key)) byDelivery.set(key, []);
    byDelivery.get(key)!.push({
      attemptedAt: a.attemptedAt.toISOString(),
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      error: a.error,
      succeeded: a.succeeded,
      responseBody: a.responseBody,
    });
  }
  const out = new Map<string, DeliveryResource[]>(eventIds.map((id) => [id, []]));
  for (const d of deliveries) {
    out.get(d.eventId)?.push({
      endpointId: d.endpointId,
      url: d.endpoint.url,
      status: d.status.toLowerCase() as DeliveryResource["status"],
      nextAttemptAt: d.status === "PENDING" ? d.nextAttemptAt.toISOString() : null,
      attempts: byDelivery.get(`${d.eventId} ${d.endpointId}`) ?? [],
    });
  }
  return out;
}

/**
 * Delivers an event again now to every enabled endpoint of its merchant and mode that wants its type
 * (including endpoints added since), starting a fresh retry schedule. An attempt in flight keeps
 * going; its outcome no longer decides the delivery.
 */
export async function resendEvent(prisma: Prisma, scope: Scope, id: string, now = new Date()): Promise<Event> {
  const event = await getEvent(prisma, scope, id);
  const queued = await prisma.$executeRaw`
    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, updated_at)
    SELECT ${event.id}, w.id, ${now}, now() FROM webhook_endpoints w
    WHERE w.merchant_id = ${scope.merchantId} AND w.livemode = ${scope.livemode} AND w.disabled_at IS NULL
      AND (cardinality(w.event_types) = 0 OR ${event.type} = ANY(w.event_types))
    ON CONFLICT (event_id, endpoint_id) DO UPDATE
      SET status = 'PENDING', attempts = 0, next_attempt_at = ${now}, lease = NULL, lease_until = NULL, updated_at = now()`;
  if (queued === 0) throw noEndpoint(scope);
  return event;
}

/** 400 `webhook_endpoint_missing`: there is nowhere to deliver this mode's events. */
export function noEndpoint(scope: Scope): AppError {
  const mode = modeName(scope.livemode);
  return new AppError(
    "webhook_endpoint_missing",
    `No enabled ${mode}-mode webhook endpoint wants this event. Add one with: npx stablegate webhooks create ${scope.merchantId} --mode ${mode} --url https://…`,
  );
}
