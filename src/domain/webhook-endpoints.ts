// Webhook endpoints, managed by the `stablegate` settings command: where a merchant's events go in
// one mode, which types, and the secret that signs them. A rotation keeps the old secret signing
// alongside the new one for an overlap, so receivers can switch without missing a verified event.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { WebhookEndpoint } from "../generated/prisma/client.js";
import { newWebhookSecret } from "../webhooks/signature.js";
import { checkWebhookTarget, type Resolver, systemResolver, WebhookTargetError } from "../webhooks/target-guard.js";
import { AppError, invalidParam, notFound } from "./errors.js";
import { EVENT_TYPES } from "./events.js";
import { newId } from "./ids.js";
import { parseInput } from "./validation.js";

export type { WebhookEndpoint };

/** How long the previous secret keeps signing after a rotation, unless told otherwise. */
export const DEFAULT_ROTATION_OVERLAP_HOURS = 24;

const createSchema = z.strictObject({
  livemode: z.boolean(),
  url: z.string().min(1).max(2048),
  eventTypes: z
    .array(z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` }))
    .max(EVENT_TYPES.length)
    .default([]),
});

/** A new endpoint and its secret, which is shown this once. */
export interface EndpointCreated {
  endpoint: WebhookEndpoint;
  secret: string;
}

/**
 * Adds an endpoint. The URL must be http(s); in live mode https and resolving only to public
 * addresses (checked again before every delivery, since DNS can change).
 */
export async function createWebhookEndpoint(
  prisma: Prisma,
  merchantId: string,
  input: { livemode: boolean; url: string; eventTypes?: string[] | undefined },
  resolve: Resolver = systemResolver,
): Promise<EndpointCreated> {
  const data = parseInput(createSchema, input);
  await checkWebhookUrl(data.url, data.livemode, resolve);
  const exists = await prisma.merchant.count({ where: { id: merchantId } });
  if (!exists) throw notFound("merchant", merchantId);
  const secret = newWebhookSecret();
  const endpoint = await prisma.webhookEndpoint.create({
    data: { id: newId("whep"), merchantId, livemode: data.livemode, url: data.url, secret, eventTypes: [...new Set(data.eventTypes)] },
  });
  return { endpoint, secret };
}

/** A merchant's endpoints, oldest first. */
export function listWebhookEndpoints(prisma: Prisma, merchantId: string): Promise<WebhookEndpoint[]> {
  return prisma.webhookEndpoint.findMany({ where: { merchantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** Changes an endpoint's URL or event types (same checks as on creation). */
export async function updateWebhookEndpoint(
  prisma: Prisma,
  id: string,
  input: { url?: string; eventTypes?: string[] },
  resolve: Resolver = systemResolver,
): Promise<WebhookEndpoint> {
  const endpoint = await getEndpoint(prisma, id);
  const data = parseInput(createSchema.omit({ livemode: true }).partial(), input);
  if (data.url !== undefined) await checkWebhookUrl(data.url, endpoint.livemode, resolve);
  return prisma.webhookEndpoint.update({
    where: { id },
    data: { ...(data.url !== undefined && { url: data.url }), ...(data.eventTypes !== undefined && { eventTypes: [...new Set(data.eventTypes)] }) },
  });
}

/**
 * Gives an endpoint a new secret. The old one keeps signing next to it for `overlapHours`
 * (0 = it stops at once, for a leaked secret). Returns the new secret, shown this once.
 */
export async function rotateWebhookSecret(
  prisma: Prisma,
  id: string,
  overlapHours = DEFAULT_ROTATION_OVERLAP_HOURS,
  now = new Date(),
): Promise<EndpointCreated> {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > 24 * 7) {
    throw invalidParam("overlapHours", "Invalid overlap: must be a whole number of hours from 0 to 168");
  }
  const endpoint = await getEndpoint(prisma, id);
  const secret = newWebhookSecret();
  const updated = await prisma.webhookEndpoint.update({
    where: { id },
    data: {
      secret,
      previousSecret: overlapHours > 0 ? endpoint.secret : null,
      previousSecretExpiresAt: overlapHours > 0 ? new Date(now.getTime() + overlapHours * 3_600_000) : null,
    },
  });
  return { endpoint: updated, secret };
}

/** Stops (`enabled` false) or resumes deliveries to an endpoint; resuming sends what waited. */
export async function setWebhookEndpointEnabled(prisma: Prisma, id: string, enabled: boolean, now = new Date()): Promise<WebhookEndpoint> {
  await getEndpoint(prisma, id);
  return prisma.webhookEndpoint.update({
    where: { id },
    data: enabled ? { disabledAt: null, disabledReason: null } : { disabledAt: now, disabledReason: "disabled in settings" },
  });
}

/** Removes an endpoint and its pending deliveries (the events stay). */
export async function deleteWebhookEndpoint(prisma: Prisma, id: string): Promise<void> {
  const { count } = await prisma.webhookEndpoint.deleteMany({ where: { id } });
  if (count === 0) throw notFound("webhook endpoint", id);
}

/** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
export function signingSecrets(e: Pick<WebhookEndpoint, "secret" | "previousSecret" | "previousSecretExpiresAt">, now: Date): string[] {
  return e.previousSecret && e.previousSecretExpiresAt && e.previousSecretExpiresAt > now ? [e.secret, e.previousSecret] : [e.secret];
}

async function getEndpoint(prisma: Prisma, id: string): Promise<WebhookEndpoint> {
  const endpoint = await prisma.webhookEndpoint.findUnique({ where: { id } });
  if (!endpoint) throw notFound("webhook endpoint", id);
  return endpoint;
}

/** 400 `parameter_invalid` on `param` unless `url` may receive this mode's webhooks. */
export async function checkWebhookUrl(url: string, livemode: boolean, resolve: Resolver = systemResolver, param = "url"): Promise<void> {
  try {
    await checkWebhookTarget(url, livemode, resolve);
  } catch (e) {
    if (e instanceof WebhookTargetError) throw new AppError("parameter_invalid", `Invalid ${param}: ${e.message}`, param);
    throw e;
  }
}
