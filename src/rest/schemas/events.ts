// Events as /v1/openapi.json shows them: one named schema per event type, whose `type` is that type
// and whose `data` is the resource it reports, by the same schema as the API's answers. The webhooks
// section has one entry per type with its schema; GET /v1/events lists the union of them.
import { z } from "zod";
import { ChargeResource } from "../../domain/charges.js";
import { CustomerResource } from "../../domain/customers.js";
import { DeliveryResource, EVENT_TYPES, EventResource, type EventType } from "../../domain/events.js";
import { InvoiceResource } from "../../domain/invoices.js";
import { RefundResource } from "../../domain/refunds.js";
import { named } from "./components.js";

/** What each kind of event carries in `data`: the object after the change. */
const DATA_OF = { charge: ChargeResource, customer: CustomerResource, refund: RefundResource, invoice: InvoiceResource } as const;

type Kind = keyof typeof DATA_OF;

/** When each event is sent (the webhooks' descriptions). */
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
};

/** The schema name of an event type's payload: charge.late_payment → ChargeLatePaymentEvent. */
export function eventSchemaName(type: EventType): string {
  return `${type.replace(/(?:^|[._])(\w)/g, (_, c: string) => c.toUpperCase())}Event`;
}

/** The payload of an event of `type`: the event as GET /v1/events shows it and its webhooks carry it. */
function eventOf<T extends EventType>(type: T) {
  const data = DATA_OF[type.slice(0, type.indexOf(".")) as Kind];
  return EventResource.extend({ type: z.literal(type), data });
}

/** Each event type's payload schema, named. */
export const EVENTS = Object.fromEntries(EVENT_TYPES.map((type) => [type, named(eventSchemaName(type), eventOf(type).describe(EVENT_DESCRIPTIONS[type]))])) as {
  [T in EventType]: ReturnType<typeof eventOf<T>>;
};

const [first, ...rest] = EVENT_TYPES.map((type) => EVENTS[type]);
/** Any event, told apart by its `type`. */
export const Event = named("Event", z.discriminatedUnion("type", [first!, ...rest]));

const [firstWith, ...restWith] = EVENT_TYPES.map((type) => EVENTS[type].extend({ deliveries: z.array(DeliveryResource) }));
/** An event with where it was sent (GET /v1/events/:id; the webhook body has no deliveries). */
export const EventWithDeliveries = named("EventWithDeliveries", z.discriminatedUnion("type", [firstWith!, ...restWith]));
