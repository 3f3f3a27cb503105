// `Event`: the event log (`events`), each event's webhook deliveries, `resendEvent` and the test-mode
// `sendTestWebhook`. Rules live in domain/events.ts and domain/test-webhooks.ts.
import {
  CHARGE_EVENT_TYPES,
  chargeEventsSince,
  type DeliveryResource,
  countEvents,
  eventDeliveries,
  eventsOfCharge,
  getEvent,
  listEvents,
  resendEvent,
} from "../../domain/events.js";
import { sendTestWebhook } from "../../domain/test-webhooks.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageRequest } from "../connection.js";
import { liveValue } from "../live.js";

builder.scalarType("JSON", {
  description: "Any JSON value: here, the object an event reports, exactly as REST and webhooks show it.",
  serialize: (value) => value,
  parseValue: () => {
    throw new TypeError("JSON is output only");
  },
});

const DeliveryStatus = builder.enumType("WebhookDeliveryStatus", { values: ["pending", "succeeded", "failed"] as const });

const WebhookAttempt = builder.objectRef<DeliveryResource["attempts"][number]>("WebhookAttempt").implement({
  description: "One HTTP request of a delivery.",
  fields: (t) => ({
    attemptedAt: t.exposeString("attemptedAt"),
    statusCode: t.exposeInt("statusCode", { nullable: true, description: "Null when no response came (timeout, connection refused, address not allowed)." }),
    latencyMs: t.exposeInt("latencyMs"),
    error: t.exposeString("error", { nullable: true }),
    succeeded: t.exposeBoolean("succeeded"),
  }),
});

const WebhookDelivery = builder.objectRef<DeliveryResource>("WebhookDelivery").implement({
  description: "An event's delivery to one webhook endpoint.",
  fields: (t) => ({
    endpointId: t.exposeID("endpointId"),
    url: t.exposeString("url"),
    status: t.field({ type: DeliveryStatus, resolve: (d) => d.status }),
    nextAttemptAt: t.exposeString("nextAttemptAt", { nullable: true }),
    attempts: t.field({ type: [WebhookAttempt], resolve: (d) => d.attempts }),
  }),
});

const Event = builder.prismaNode("Event", {
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    type: t.exposeString("type", { description: "e.g. charge.completed" }),
    timestamp: t.string({ resolve: (e) => e.createdAt.toISOString() }),
    livemode: t.exposeBoolean("livemode"),
    data: t.field({ type: "JSON", description: "The object as it was right after the change.", resolve: (e) => e.data }),
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
  t.field({
    type: [Event],
    description: "The charge's timeline: its events, oldest first (at most 200), with their webhook deliveries.",
    resolve: (charge, _args, ctx) => eventsOfCharge(ctx.prisma, ctx.scope(), charge.id),
  }),
);

builder.queryFields((t) => ({
  events: t.connection(
    {
      type: Event,
      description: "Events, newest first.",
      args: { type: t.arg.string({ description: "Only this type, e.g. charge.completed." }) },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filter = { type: args.type ?? undefined };
        const page = await listEvents(ctx.prisma, scope, { ...filter, ...pageRequest(args) });
        return connectionOf(page, args, () => countEvents(ctx.prisma, scope, filter));
      },
    },
    countedConnection("Events matching the filter."),
  ),
  event: t.prismaField({
    type: "Event",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => getEvent(ctx.prisma, ctx.scope(), id),
  }),
}));

builder.mutationFields((t) => ({
  sendTestWebhook: t.prismaField({
    type: "Event",
    description: "Test mode only: records a mock event of `type` with sample data and delivers it like a real one.",
    args: { type: t.arg.string({ required: true }) },
    resolve: (_query, _root, { type }, ctx) => sendTestWebhook(ctx.prisma, ctx.scope(), { type }, ctx.charges),
  }),
  resendEvent: t.prismaField({
    type: "Event",
    description: "Delivers an event again now to every enabled endpoint that wants it.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => resendEvent(ctx.prisma, ctx.scope(), id),
  }),
}));

const ChargeEventType = builder.enumType("ChargeEventType", {
  description: "A charge event type: COMPLETED is charge.completed, CHAIN_SELECTED is charge.chain_selected, and so on.",
  values: Object.fromEntries(CHARGE_EVENT_TYPES.map((type) => [type.slice("charge.".length).toUpperCase(), { value: type }])),
});

builder.subscriptionFields((t) => ({
  chargeEvents: t.field({
    type: Event,
    description: "Charge events of your key's merchant and mode as they are committed; all charge events when `types` is empty or absent.",
    args: { types: t.arg({ type: [ChargeEventType] }) },
    subscribe: (_root, { types }, ctx) => {
      const scope = ctx.scope();
      const wanted = types ?? [];
      return ctx.live.chargeEvents(scope, wanted, (after) => chargeEventsSince(ctx.prisma, scope, wanted, after), ctx.signal);
    },
    resolve: (event) => {
      const e = liveValue(event);
      return { id: e.id, merchantId: e.merchantId, livemode: e.livemode, type: e.type, data: e.data as never, createdAt: new Date(e.timestamp) };
    },
  }),
}));
