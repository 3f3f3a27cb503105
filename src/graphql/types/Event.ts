// `Event`: the event log (`events`), each event's webhook deliveries, `resendEvent` and the test-mode
// `sendTestWebhook`. Rules live in domain/events.ts and domain/test-webhooks.ts.
import { describe } from "../../domain/describe.js";
import {
  CHARGE_EVENT_TYPES,
  countEvents,
  EVENT_DESCRIPTIONS,
  EVENT_OBJECT_TYPES,
  EVENT_TYPES,
  type EventType,
  eventData,
  eventDeliveries,
  eventsOfCharges,
  eventsSince,
  type RecordedEvent,
  getEvent,
  listEvents,
  resendEvent,
  DeliveryResource,
  EventResource,
} from "../../domain/events.js";
import { filterSchema, followSchema, listSchema } from "../../domain/event-requests.js";
import { testWebhookSchema } from "../../domain/test-webhook-requests.js";
import { assertTestWebhookMode, sendTestWebhook } from "../../domain/test-webhooks.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";
import { liveValue } from "../live.js";

builder.scalarType("JSON", {
  description: "Any JSON value: here, the object an event reports, exactly as REST and webhooks show it.",
  serialize: (value) => value,
  parseValue: () => {
    throw new TypeError("JSON is output only");
  },
});

// Upper case like every GraphQL enum; the values stay the domain's (and REST's) lower-case ones.
const DeliveryStatus = builder.enumType("WebhookDeliveryStatus", {
  description: "Where an event's delivery to an endpoint is.",
  values: {
    PENDING: { value: "pending", description: "Not delivered yet: the next attempt is at nextAttemptAt." },
    SUCCEEDED: { value: "succeeded", description: "The endpoint answered 2xx." },
    FAILED: { value: "failed", description: "Every attempt of the retry schedule failed; resendEvent starts a new one." },
  } as const satisfies Record<string, { value: DeliveryResource["status"]; description: string }>,
});

const WebhookAttempt = builder.objectRef<DeliveryResource["attempts"][number]>("WebhookAttempt").implement({
  description: "One HTTP request of a delivery.",
  fields: (t) => ({
    attemptedAt: t.expose("attemptedAt", { type: "DateTime", description: describe(DeliveryResource.shape.attempts.element, "attemptedAt") }),
    statusCode: t.exposeInt("statusCode", { nullable: true, description: describe(DeliveryResource.shape.attempts.element, "statusCode") }),
    latencyMs: t.exposeInt("latencyMs", { description: describe(DeliveryResource.shape.attempts.element, "latencyMs") }),
    error: t.exposeString("error", { nullable: true, description: describe(DeliveryResource.shape.attempts.element, "error") }),
    succeeded: t.exposeBoolean("succeeded", { description: describe(DeliveryResource.shape.attempts.element, "succeeded") }),
    responseBody: t.exposeString("responseBody", {
      nullable: true,
      description: describe(DeliveryResource.shape.attempts.element, "responseBody"),
    }),
  }),
});

const WebhookDelivery = builder.objectRef<DeliveryResource>("WebhookDelivery").implement({
  description: "An event's delivery to one webhook endpoint.",
  fields: (t) => ({
    endpointId: t.exposeID("endpointId", { description: describe(DeliveryResource, "endpointId") }),
    url: t.exposeString("url", { description: describe(DeliveryResource, "url") }),
    status: t.field({ type: DeliveryStatus, description: describe(DeliveryResource, "status"), resolve: (d) => d.status }),
    nextAttemptAt: t.expose("nextAttemptAt", {
      type: "DateTime",
      nullable: true,
      description: describe(DeliveryResource, "nextAttemptAt"),
    }),
    attempts: t.field({ type: [WebhookAttempt], description: describe(DeliveryResource, "attempts"), resolve: (d) => d.attempts }),
  }),
});

const Event = builder.prismaNode("Event", {
  description: "A change to your records, as it was delivered to your webhook endpoints.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    type: t.exposeString("type", { description: describe(EventResource, "type") }),
    timestamp: t.field({ type: "DateTime", description: describe(EventResource, "timestamp"), resolve: (e) => e.createdAt }),
    livemode: t.exposeBoolean("livemode", { description: describe(EventResource, "livemode") }),
    data: t.field({ type: "JSON", description: describe(EventResource, "data"), resolve: (e) => eventData(e.type, e.data) }),
    deliveries: t.loadableList({
      type: WebhookDelivery,
      description: "Where the event was sent, with every attempt; batched across a list.",
      load: async (ids: string[], ctx) => {
        const byEvent = await eventDeliveries(ctx.prisma, ids);
        return ids.map((id) => byEvent.get(id) ?? []);
      },
      resolve: (e) => e.id,
    }),
  }),
});

builder.prismaObjectField("Charge", "events", (t) =>
  t.loadableList({
    type: Event,
    description: "The charge's timeline: its events, oldest first (at most 200), with their webhook deliveries.",
    // Batched, not cached: a subscription's context outlives the rows it reads.
    loaderOptions: { cache: false },
    load: async (ids: string[], ctx) => {
      const timelines = await eventsOfCharges(ctx.prisma, ctx.scope(), ids);
      return ids.map((id) => timelines.get(id) ?? []);
    },
    resolve: (charge) => charge.id,
  }),
);

// Upper case like every GraphQL enum; the values stay the domain's (and REST's) lower-case ones.
const EventObjectType = builder.enumType("EventObjectType", {
  description: "The kind of object an event is about: the part of its type before the dot.",
  values: Object.fromEntries(EVENT_OBJECT_TYPES.map((kind) => [kind.toUpperCase(), { value: kind, description: `Events about a ${kind} (${kind}.…).` }])),
});

const EventTypeInfo = builder.objectRef<EventType>("EventTypeInfo").implement({
  description: "One type of event the API sends, as a webhook endpoint can be limited to.",
  fields: (t) => ({
    type: t.string({ description: "The type, e.g. charge.completed.", resolve: (type) => type }),
    description: t.string({ description: "What happened when it is sent.", resolve: (type) => EVENT_DESCRIPTIONS[type] }),
  }),
});

builder.queryFields((t) => ({
  eventTypes: t.field({
    type: [EventTypeInfo],
    description: "Every event type the API sends, in a stable order: what a webhook endpoint's `events` may name.",
    resolve: () => [...EVENT_TYPES],
  }),
  events: t.connection(
    {
      type: Event,
      description: "Events, newest first.",
      args: {
        type: t.arg.string({ description: "Only this type, e.g. charge.completed." }),
        objectType: t.arg({ type: EventObjectType, description: "Only events about this kind of object." }),
        objectId: t.arg.id({ description: "Only events about this object (chrg_…, cus_…, ref_…, inv_…)." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filter = { type: args.type ?? undefined, objectType: args.objectType ?? undefined, objectId: args.objectId ?? undefined };
        const page = await listEvents(ctx.prisma, scope, parseInput(listSchema, { ...filter, ...pageRequest(args) }), pageEnd(args));
        return connectionOf(page, args, () => countEvents(ctx.prisma, scope, parseInput(filterSchema, filter)));
      },
    },
    countedConnection("Events matching the filter."),
  ),
  event: t.prismaField({
    type: "Event",
    description: "An event by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The event's id (evt_…)." }) },
    resolve: (query, _root, { id }, ctx) => getEvent(ctx.prisma, ctx.scope(), id, query),
  }),
}));

builder.mutationFields((t) => ({
  sendTestWebhook: t.prismaField({
    type: "Event",
    description: "Test mode only: records a mock event of `type` with sample data and delivers it like a real one.",
    args: { type: t.arg.string({ required: true, description: "An event type, e.g. charge.completed." }) },
    resolve: (_query, _root, { type }, ctx) => {
      const scope = ctx.scope();
      assertTestWebhookMode(scope);
      return sendTestWebhook(ctx.prisma, scope, parseInput(testWebhookSchema, { type }), ctx.charges);
    },
  }),
  resendEvent: t.prismaField({
    type: "Event",
    description: "Delivers an event again now to every enabled endpoint that wants it.",
    args: { id: t.arg.id({ required: true, description: "The event's id (evt_…)." }) },
    resolve: (_query, _root, { id }, ctx) => resendEvent(ctx.prisma, ctx.scope(), id),
  }),
}));

const ChargeEventType = builder.enumType("ChargeEventType", {
  description: "A charge event type: COMPLETED is charge.completed, CHAIN_SELECTED is charge.chain_selected, and so on.",
  values: Object.fromEntries(
    CHARGE_EVENT_TYPES.map((type) => [type.slice("charge.".length).toUpperCase(), { value: type, description: EVENT_DESCRIPTIONS[type] }]),
  ),
});

/** A streamed event as the Event type reads it (a stored row's fields). */
function eventRow(e: RecordedEvent) {
  return { id: e.id, merchantId: e.merchantId, livemode: e.livemode, type: e.type, data: e.data as never, createdAt: new Date(e.timestamp) };
}

builder.subscriptionFields((t) => ({
  chargeEvents: t.field({
    type: Event,
    description: "Charge events of your key's merchant and mode as they are committed; all charge events when `types` is empty or absent.",
    args: { types: t.arg({ type: [ChargeEventType], description: "The types to follow; empty or absent: every charge event." }) },
    subscribe: (_root, { types }, ctx) => {
      const scope = ctx.scope();
      const wanted = types && types.length > 0 ? types : CHARGE_EVENT_TYPES;
      return ctx.live.events(scope, wanted, (after) => eventsSince(ctx.prisma, scope, wanted, after), ctx.signal);
    },
    resolve: (event) => eventRow(liveValue(event)),
  }),
  events: t.field({
    type: Event,
    description:
      "Every event of your key's merchant and mode as it is committed (what `stablegate listen` forwards), of `types` only when given; empty or absent: every type.",
    args: {
      types: t.arg.stringList({ description: 'Event types to follow, e.g. ["customer.created"] (eventTypes lists them); empty or absent: every type.' }),
    },
    subscribe: (_root, { types }, ctx) => {
      const scope = ctx.scope();
      const wanted = parseInput(followSchema, { types: types ?? [] }).types;
      return ctx.live.events(scope, wanted, (after) => eventsSince(ctx.prisma, scope, wanted, after), ctx.signal);
    },
    resolve: (event) => eventRow(liveValue(event)),
  }),
}));
