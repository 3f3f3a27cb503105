// The request contract of webhook endpoints: the bodies of POST /v1/webhook_endpoints, PATCH
// /v1/webhook_endpoints/:id and its secret rotation (GraphQL's inputs alike) and the query of
// GET /v1/webhook_endpoints. The doors parse a request with these (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { EVENT_TYPES } from "./events.js";
import { pageParams } from "./paging.js";
import { overlapHoursField } from "./validation.js";

/** Where an endpoint's events go, as a request gives it (http(s) and its address are checked by the domain: checkWebhookUrl). */
export const webhookUrl = z.string().min(1).max(2048);

const fields = {
  url: webhookUrl,
  events: z.array(z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` })).max(EVENT_TYPES.length),
  description: z.string().max(500).nullable(),
};
/** The body of POST /v1/webhook_endpoints (and the createWebhookEndpoint mutation's input). */
export const createSchema = z.strictObject({ url: fields.url, events: fields.events.default([]), description: fields.description.optional() });
/** The body of PATCH /v1/webhook_endpoints/:id. */
export const updateSchema = z.strictObject({
  url: fields.url.optional(),
  events: fields.events.optional(),
  description: fields.description.optional(),
  status: z.enum(["enabled", "disabled"]).optional(),
});
/** The body of POST /v1/webhook_endpoints/:id/rotate_secret. */
export const rotateSchema = z.strictObject({ overlapHours: overlapHoursField() });
/** The query of GET /v1/webhook_endpoints: a keyset page. */
export const listSchema = z.strictObject(pageParams);

/** An endpoint to create, parsed (createSchema). */
export type WebhookEndpointRequest = z.output<typeof createSchema>;
/** An endpoint's changes, parsed (updateSchema). */
export type WebhookEndpointUpdate = z.output<typeof updateSchema>;
/** A secret rotation, parsed (rotateSchema). */
export type WebhookSecretRotation = z.output<typeof rotateSchema>;
/** The query of GET /v1/webhook_endpoints, parsed (listSchema). */
export type WebhookEndpointListQuery = z.output<typeof listSchema>;
