// REST /v1/webhook_endpoints: where the key's merchant gets its events in the key's mode.
import type { FastifyInstance } from "fastify";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  webhookEndpointResource,
} from "../domain/webhook-endpoints.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

type IdParams = { Params: { id: string } };

/** Registers the webhook endpoint endpoints. */
export function webhookEndpointRoutes(app: FastifyInstance, { prisma }: RestDeps): void {
  app.post("/v1/webhook_endpoints", { config: { group: "create" } }, async (req, reply) => {
    const { endpoint, secret } = await createWebhookEndpoint(prisma, scopeOf(req), req.body ?? {});
    return reply.code(201).send(webhookEndpointResource(endpoint, secret));
  });

  app.get("/v1/webhook_endpoints", { config: { group: "list" } }, async (req) => {
    const { data, hasMore } = await listWebhookEndpoints(prisma, scopeOf(req), req.query);
    return { object: "list", data: data.map((e) => webhookEndpointResource(e)), hasMore };
  });

  app.get<IdParams>("/v1/webhook_endpoints/:id", { config: { group: "read" } }, async (req) => {
    return webhookEndpointResource(await getWebhookEndpoint(prisma, scopeOf(req), req.params.id));
  });

  app.patch<IdParams>("/v1/webhook_endpoints/:id", { config: { group: "create" } }, async (req) => {
    return webhookEndpointResource(await updateWebhookEndpoint(prisma, scopeOf(req), req.params.id, req.body ?? {}));
  });

  app.delete<IdParams>("/v1/webhook_endpoints/:id", { config: { group: "create" } }, async (req) => {
    await deleteWebhookEndpoint(prisma, scopeOf(req), req.params.id);
    return { id: req.params.id, object: "webhook_endpoint", deleted: true };
  });

  app.post<IdParams>("/v1/webhook_endpoints/:id/rotate_secret", { config: { group: "create" } }, async (req) => {
    const { endpoint, secret } = await rotateWebhookSecret(prisma, scopeOf(req), req.params.id, req.body ?? {});
    return webhookEndpointResource(endpoint, secret);
  });
}
