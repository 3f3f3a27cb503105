// REST /v1/events and /v1/webhooks: the event log, each event's deliveries and attempts, resending,
// and mock webhooks for test mode.
import type { FastifyInstance } from "fastify";
import type { Prisma } from "../db/client.js";
import { listSchema } from "../domain/event-requests.js";
import { type Event, eventDeliveries, eventResource, getEvent, listEvents, resendEvent } from "../domain/events.js";
import { testWebhookSchema } from "../domain/test-webhook-requests.js";
import { assertTestWebhookMode, sendTestWebhook } from "../domain/test-webhooks.js";
import { parseInput } from "../domain/validation.js";
import { listOf } from "./openapi.js";
import { Event as AnyEvent, EventWithDeliveries } from "./schemas/events.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Events";

type IdParams = { Params: { id: string } };

/** Registers the event and webhook endpoints. */
export function eventRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const list = {
    group: "list",
    doc: {
      operationId: "listEvents",
      summary: "List events, newest first",
      description:
        "Every event of the key's mode, newest first, paged by cursor; `type` keeps one type, `objectType` one kind of object (charge, refund…), `objectId` the events about one object. Each is the body its webhooks carry.",
      tag,
      query: listSchema,
      ok: { 200: listOf(AnyEvent) },
    },
  } as const;
  app.get("/v1/events", { config: list }, async (req) => {
    const { data, hasMore } = await listEvents(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map(eventResource), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getEvent",
      summary: "Retrieve an event with its webhook deliveries",
      description: "The event with its webhook deliveries: each endpoint's status and every attempt (status code, latency, error).",
      tag,
      ok: { 200: EventWithDeliveries },
    },
  } as const;
  app.get<IdParams>("/v1/events/:id", { config: retrieve }, async (req) => {
    return withDeliveries(prisma, await getEvent(prisma, scopeOf(req), req.params.id));
  });

  const resend = {
    group: "create",
    doc: {
      operationId: "resendEvent",
      summary: "Deliver an event again now to every enabled endpoint that wants it",
      description:
        "Delivers the event again now to every enabled endpoint that wants its type (endpoints added since included), on a fresh retry schedule; 400 `webhook_endpoint_missing` when there is none.",
      tag,
      ok: { 200: EventWithDeliveries },
      errors: ["webhook_endpoint_missing"],
    },
  } as const;
  app.post<IdParams>("/v1/events/:id/resend", { config: resend }, async (req) => {
    return withDeliveries(prisma, await resendEvent(prisma, scopeOf(req), req.params.id));
  });

  const test = {
    group: "create",
    doc: {
      operationId: "sendTestWebhook",
      summary: "Test mode: record a mock event with sample data and deliver it like a real one",
      description:
        "Test mode: records an event of the given type with sample data, shaped exactly like a real one, and delivers it, signed, to the endpoints that want it: build and check a receiver before taking a payment.",
      tag,
      body: testWebhookSchema,
      ok: { 201: EventWithDeliveries },
      errors: ["test_mode_only", "webhook_endpoint_missing"],
    },
  } as const;
  app.post("/v1/webhooks/test", { config: test }, async (req, reply) => {
    const scope = scopeOf(req);
    assertTestWebhookMode(scope);
    const event = await sendTestWebhook(prisma, scope, parseInput(testWebhookSchema, req.body ?? {}), settings);
    return reply.code(201).send(await withDeliveries(prisma, event));
  });
}

/** The event with its deliveries and their attempts (the webhook body itself has no deliveries). */
async function withDeliveries(prisma: Prisma, event: Event) {
  const deliveries = await eventDeliveries(prisma, [event.id]);
  return { ...eventResource(event), deliveries: deliveries.get(event.id) ?? [] };
}
