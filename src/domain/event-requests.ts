// The request contract of events: the query of GET /v1/events (GraphQL's connection) and the types a
// live stream follows (GraphQL's `events` subscription). The doors parse a request with these
// (parseInput) and hand the domain the typed result. The event types live here, as every request
// about events (and a webhook endpoint's `events`) names them; domain/events.ts hands them on.
import { z } from "zod";
import { pageParams } from "./paging.js";

/** Every event type .docs/webhooks.md lists. */
export const EVENT_TYPES = [
  "charge.pending",
  "charge.chain_selected",
  "charge.partial",
  "charge.received",
  "charge.completed",
  "charge.underpaid",
  "charge.expired",
  "charge.cancelled",
  "charge.late_payment",
  "charge.payout_confirmed",
  "charge.payout_blocked",
  "charge.needs_review",
  "charge.reviewed",
  "customer.created",
  "customer.updated",
  "customer.deleted",
  "refund.created",
  "refund.updated",
  "refund.completed",
  "refund.cancelled",
  "invoice.created",
  "invoice.updated",
  "invoice.finalized",
  "invoice.paid",
  "invoice.voided",
  "invoice.marked_uncollectible",
  "invoice.deleted",
  "invoice.upcoming",
  "invoice.payment_failed",
  "subscription.created",
  "subscription.updated",
  "subscription.canceled",
  "x402.payment",
] as const;

/** The kinds of object events are about: the part of their type before the dot (charge, customer, …). */
export const EVENT_OBJECT_TYPES = [...new Set(EVENT_TYPES.map((t) => t.slice(0, t.indexOf("."))))];

/** The query of GET /v1/events: a keyset page and its filters (GraphQL's connection). */
export const listSchema = z.strictObject({
  ...pageParams,
  type: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` }).optional(),
  objectType: z
    .enum(EVENT_OBJECT_TYPES as [string, ...string[]], { error: `must be one of ${EVENT_OBJECT_TYPES.join(", ")}` })
    .optional()
    .describe(`Only events about this kind of object: ${EVENT_OBJECT_TYPES.join(", ")}.`),
  objectId: z.string().trim().min(1).max(100).optional().describe("Only events about this object: the id its data carries (chrg_…, cus_…, ref_…, inv_…)."),
});

/** The list's filters alone: GraphQL's count. */
export const filterSchema = listSchema.pick({ type: true, objectType: true, objectId: true });

/** The event types a live stream follows (400 naming `types`), each once; empty: every type. */
export const followSchema = z.object({
  types: z
    .array(z.enum(EVENT_TYPES, { error: "must be an event type, e.g. customer.created (the eventTypes query lists them)" }))
    .max(100)
    .transform((types) => [...new Set(types)]),
});

/** The query of GET /v1/events, parsed (listSchema). */
export type EventListQuery = z.output<typeof listSchema>;
/** An event list's filters, parsed (filterSchema). */
export type EventFilters = z.output<typeof filterSchema>;
