// Events as /v1/openapi.json shows them: one named schema per event type, whose `type` is that type
// and whose `data` is the resource it reports, by the same schema as the API's answers, plus the few
// fields only that event carries (a charge's payments, a deletion's `deleted`). The webhooks section
// has one entry per type with its schema; GET /v1/events lists the union of them.
import { z } from "zod";
import { ChargeEventExtras, ChargeResource } from "../../domain/charges/resource.js";
import { CustomerResource } from "../../domain/customers.js";
import { DeliveryResource, EVENT_DESCRIPTIONS, EVENT_TYPES, EventResource, type EventType } from "../../domain/events.js";
import { InvoiceResource } from "../../domain/invoices.js";
import { RefundResource } from "../../domain/refunds.js";
import { SubscriptionResource } from "../../domain/subscriptions.js";
import { X402PaymentResource } from "../../domain/x402/payments.js";
import { named } from "./components.js";

/** What each kind of event carries in `data`: the object after the change. */
const DATA_OF = {
  charge: ChargeResource,
  customer: CustomerResource,
  refund: RefundResource,
  invoice: InvoiceResource,
  subscription: SubscriptionResource,
  x402: X402PaymentResource,
} as const;

/** Event types whose `data` is not their kind's resource: a renewal's notice is about the subscription (its invoice does not exist yet). */
const DATA_OF_TYPE: Partial<Record<EventType, z.ZodObject>> = { "invoice.upcoming": SubscriptionResource };

type Kind = keyof typeof DATA_OF;

const { payments, underpaidAmount, overpaidAmount } = ChargeEventExtras.shape;
const deleted = z.literal(true).describe("Always true: the object was deleted and is shown as it was.");

/** The fields an event type adds to its resource, which the API's answers never have. */
const EXTRAS = {
  "charge.partial": { payments },
  "charge.received": { payments, underpaidAmount },
  "charge.completed": { underpaidAmount, overpaidAmount },
  "charge.late_payment": { payments },
  "customer.deleted": { deleted },
  "invoice.deleted": { deleted },
} satisfies Partial<Record<EventType, z.ZodRawShape>>;

/** The schema name of an event type's payload: charge.late_payment → ChargeLatePaymentEvent. */
export function eventSchemaName(type: EventType): string {
  return `${type.replace(/(?:^|[._])(\w)/g, (_, c: string) => c.toUpperCase())}Event`;
}

/** The payload of an event of `type`: the event as GET /v1/events shows it and its webhooks carry it. */
function eventOf<T extends EventType>(type: T) {
  const resource = DATA_OF_TYPE[type] ?? DATA_OF[type.slice(0, type.indexOf(".")) as Kind];
  const extras: z.ZodRawShape | undefined = (EXTRAS as Partial<Record<EventType, z.ZodRawShape>>)[type];
  return EventResource.extend({ type: z.literal(type), data: extras ? resource.extend(extras) : resource });
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
