// REST /v1/webhook_endpoints: where the key's merchant gets its events in the key's mode.
import type { FastifyInstance } from "fastify";
import { parseInput } from "../domain/validation.js";
import { createSchema, listSchema, rotateSchema, updateSchema } from "../domain/webhook-endpoint-requests.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  webhookEndpointResource,
} from "../domain/webhook-endpoints.js";
import { listOf } from "./openapi.js";
import { DeletedWebhookEndpoint, WebhookEndpoint as Endpoint, WebhookEndpointWithSecret } from "./schemas/components.js";
import { apiKeyActor, type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Webhook endpoints";

type IdParams = { Params: { id: string } };

/** Registers the webhook endpoint endpoints. */
export function webhookEndpointRoutes(app: FastifyInstance, { prisma }: RestDeps): void {
  const create = {
    group: "create",
    doc: {
      operationId: "createWebhookEndpoint",
      summary: "Add a webhook endpoint; its signing secret is shown this once",
      description:
        "Adds an endpoint in the key's mode: `events` lists the types it gets (empty: all). The answer holds its signing `secret` (whsec_…), shown this once. In live mode, only https URLs that resolve to public addresses (400 `parameter_invalid`, `param: url`), checked again before every delivery; test mode allows any address, `localhost` included.",
      tag,
      body: createSchema,
      example: { url: "https://shop.example/hooks", events: ["charge.completed", "charge.underpaid"], description: "order fulfilment" },
      ok: { 201: WebhookEndpointWithSecret },
    },
  } as const;
  app.post("/v1/webhook_endpoints", { config: create }, async (req, reply) => {
    const { endpoint, secret } = await createWebhookEndpoint(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}), apiKeyActor(req));
    return reply.code(201).send(webhookEndpointResource(endpoint, secret));
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listWebhookEndpoints",
      summary: "List webhook endpoints, newest first",
      description: "Newest first, paged by cursor. Secrets are never shown again.",
      tag,
      query: listSchema,
      ok: { 200: listOf(Endpoint) },
    },
  } as const;
  app.get("/v1/webhook_endpoints", { config: list }, async (req) => {
    const { data, hasMore } = await listWebhookEndpoints(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map((e) => webhookEndpointResource(e)), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getWebhookEndpoint",
      summary: "Retrieve a webhook endpoint",
      description: "The endpoint, without its secret.",
      tag,
      ok: { 200: Endpoint },
    },
  } as const;
  app.get<IdParams>("/v1/webhook_endpoints/:id", { config: retrieve }, async (req) => {
    return webhookEndpointResource(await getWebhookEndpoint(prisma, scopeOf(req), req.params.id));
  });

  const update = {
    group: "create",
    doc: {
      operationId: "updateWebhookEndpoint",
      summary: "Change url, events, description, or pause and resume (status)",
      description: "Changes `url`, `events` or `description`; `status` pauses (disabled) or resumes (enabled) its deliveries.",
      tag,
      body: updateSchema,
      ok: { 200: Endpoint },
    },
  } as const;
  app.patch<IdParams>("/v1/webhook_endpoints/:id", { config: update }, async (req) => {
    return webhookEndpointResource(
      await updateWebhookEndpoint(prisma, scopeOf(req), req.params.id, parseInput(updateSchema, req.body ?? {}), apiKeyActor(req)),
    );
  });

  const remove = {
    group: "create",
    doc: {
      operationId: "deleteWebhookEndpoint",
      summary: "Delete a webhook endpoint and its pending deliveries",
      description: "Deletes the endpoint and its pending deliveries.",
      tag,
      ok: { 200: DeletedWebhookEndpoint },
    },
  } as const;
  app.delete<IdParams>("/v1/webhook_endpoints/:id", { config: remove }, async (req) => {
    await deleteWebhookEndpoint(prisma, scopeOf(req), req.params.id, apiKeyActor(req));
    return { id: req.params.id, object: "webhook_endpoint", deleted: true };
  });

  const rotate = {
    group: "create",
    doc: {
      operationId: "rotateWebhookEndpointSecret",
      summary: "A new signing secret (shown this once); the old one also signs for overlapHours",
      description:
        "Makes a new signing secret, shown this once. The old one keeps signing too for `overlapHours` (0–168, default 24), so that the new one can be deployed first.",
      tag,
      body: rotateSchema,
      ok: { 200: WebhookEndpointWithSecret },
    },
  } as const;
  app.post<IdParams>("/v1/webhook_endpoints/:id/rotate_secret", { config: rotate }, async (req) => {
    const { endpoint, secret } = await rotateWebhookSecret(prisma, scopeOf(req), req.params.id, parseInput(rotateSchema, req.body ?? {}), apiKeyActor(req));
    return webhookEndpointResource(endpoint, secret);
  });
}
