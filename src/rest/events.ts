// REST /v1/events and /v1/webhooks: the event log, each event's deliveries and attempts, resending,
// and mock webhooks for test mode.
import type { FastifyInstance } from "fastify";
import type { Prisma } from "../db/client.js";
import { type Event, eventDeliveries, eventResource, getEvent, listEvents, resendEvent } from "../domain/events.js";
import { sendTestWebhook } from "../domain/test-webhooks.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

type IdParams = { Params: { id: string } };

/** Registers the event and webhook endpoints. */
export function eventRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  app.get("/v1/events", { config: { group: "list" } }, async (req) => {
    const { data, hasMore } = await listEvents(prisma, scopeOf(req), req.query);
    return { object: "list", data: data.map(eventResource), hasMore };
  });

  app.get<IdParams>("/v1/events/:id", { config: { group: "read" } }, async (req) => {
    return withDeliveries(prisma, await getEvent(prisma, scopeOf(req), req.params.id));
  });

  app.post<IdParams>("/v1/events/:id/resend", { config: { group: "create" } }, async (req) => {
    return withDeliveries(prisma, await resendEvent(prisma, scopeOf(req), req.params.id));
  });

  app.post("/v1/webhooks/test", { config: { group: "create" } }, async (req, reply) => {
    const event = await sendTestWebhook(prisma, scopeOf(req), req.body ?? {}, settings);
    return reply.code(201).send(await withDeliveries(prisma, event));
  });
}

/** The event with its deliveries and their attempts (the webhook body itself has no deliveries). */
async function withDeliveries(prisma: Prisma, event: Event) {
  const deliveries = await eventDeliveries(prisma, [event.id]);
  return { ...eventResource(event), deliveries: deliveries.get(event.id) ?? [] };
}
