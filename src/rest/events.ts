// REST /v1/events and /v1/webhooks: the event log, each event's deliveries and attempts, resending,
// and mock webhooks for test mode.
import type { FastifyInstance } from "fastify";
import type { Prisma } from "../db/client.js";
import {
  type Event,
  EventResource,
  EventWithDeliveries,
  eventDeliveries,
  eventResource,
  getEvent,
  listEvents,
  listSchema,
  resendEvent,
} from "../domain/events.js";
import { sendTestWebhook, testWebhookSchema } from "../domain/test-webhooks.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Events";

type IdParams = { Params: { id: string } };

/** Registers the event and webhook endpoints. */
export function eventRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const list = {
    group: "list",
    doc: { operationId: "listEvents", summary: "List events, newest first", tag, query: listSchema, ok: { 200: listOf(EventResource) } },
  } as const;
  app.get("/v1/events", { config: list }, async (req) => {
    const { data, hasMore } = await listEvents(prisma, scopeOf(req), req.query);
    return { object: "list", data: data.map(eventResource), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: { operationId: "getEvent", summary: "Retrieve an event with its webhook deliveries", tag, ok: { 200: EventWithDeliveries } },
  } as const;
  app.get<IdParams>("/v1/events/:id", { config: retrieve }, async (req) => {
    return withDeliveries(prisma, await getEvent(prisma, scopeOf(req), req.params.id));
  });

  const resend = {
    group: "create",
    doc: {
      operationId: "resendEvent",
      summary: "Deliver an event again now to every enabled endpoint that wants it",
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
      tag,
      body: testWebhookSchema,
      ok: { 201: EventWithDeliveries },
      errors: ["test_mode_only", "webhook_endpoint_missing"],
    },
  } as const;
  app.post("/v1/webhooks/test", { config: test }, async (req, reply) => {
    const event = await sendTestWebhook(prisma, scopeOf(req), req.body ?? {}, settings);
    return reply.code(201).send(await withDeliveries(prisma, event));
  });
}

/** The event with its deliveries and their attempts (the webhook body itself has no deliveries). */
async function withDeliveries(prisma: Prisma, event: Event) {
  const deliveries = await eventDeliveries(prisma, [event.id]);
  return { ...eventResource(event), deliveries: deliveries.get(event.id) ?? [] };
}
