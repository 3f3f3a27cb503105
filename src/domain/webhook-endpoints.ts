// Webhook endpoints: where a merchant's events go in one mode, which types, and the secret that signs
// them. Managed over the API (/v1/webhook_endpoints, GraphQL) within a key's scope, and by the
// `stablegate` settings command for any merchant. A rotation keeps the old secret signing
// alongside the new one for an overlap, so receivers can switch without missing a verified event.
// Every change is recorded in the security history (`webhook_endpoint_changed`): where events go is
// where a merchant's data goes.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { Prisma as P, WebhookEndpoint } from "../generated/prisma/client.js";
import { newWebhookSecret } from "../webhooks/signature.js";
import { checkWebhookTarget, type Resolver, systemResolver, WebhookTargetError } from "../webhooks/target-guard.js";
import { AppError, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import { inScope, modeName, type Scope } from "./scope.js";
import { type Actor, OPERATOR_ACTOR, recordSecurityEvent } from "./security-events.js";
import type { WebhookEndpointListQuery, WebhookEndpointRequest, WebhookEndpointUpdate, WebhookSecretRotation } from "./webhook-endpoint-requests.js";

export type { WebhookEndpoint };

/** An endpoint as the API shows it; `secret` only when just created or rotated. */
export const WebhookEndpointResource = z.object({
  id: z.string(),
  object: z.literal("webhook_endpoint"),
  livemode: z.boolean().describe("True for live-mode events, false for test-mode ones."),
  url: z.string().describe("Where events are POSTed."),
  events: z.array(z.string()).describe("The event types sent here; empty means every type."),
  description: z.string().nullable().describe("Your note about the endpoint."),
  status: z.enum(["enabled", "disabled"]).describe("Whether events are sent."),
  secret: z.string().optional().describe("whsec_…: only in the answers that create or rotate it."),
  createdAt: z.string().describe("When it was created."),
});
export type WebhookEndpointResource = z.infer<typeof WebhookEndpointResource>;

/** An endpoint and its new secret, which is shown this once. */
export interface EndpointCreated {
  endpoint: WebhookEndpoint;
  secret: string;
}

/** Whether deliveries go out: an endpoint is disabled once paused by its merchant or after a 410 Gone. */
export function endpointStatus(e: Pick<WebhookEndpoint, "disabledAt">): "enabled" | "disabled" {
  return e.disabledAt ? "disabled" : "enabled";
}

/** The API shape of an endpoint; pass `secret` only in the answer that made it. */
export function webhookEndpointResource(e: WebhookEndpoint, secret?: string): WebhookEndpointResource {
  return {
    id: e.id,
    object: "webhook_endpoint",
    livemode: e.livemode,
    url: e.url,
    events: e.eventTypes,
    description: e.description,
    status: endpointStatus(e),
    ...(secret !== undefined && { secret }),
    createdAt: e.createdAt.toISOString(),
  };
}

/**
 * Adds an endpoint in `scope`'s mode, `actor`'s. The URL must be http(s); in live mode https and resolving only
 * to public addresses (checked again before every delivery, since DNS can change).
 */
export async function createWebhookEndpoint(
  prisma: Prisma,
  scope: Scope,
  data: WebhookEndpointRequest,
  actor: Actor,
  resolve: Resolver = systemResolver,
): Promise<EndpointCreated> {
  await checkWebhookUrl(data.url, scope.livemode, resolve);
  const secret = newWebhookSecret();
  const endpoint = await prisma.$transaction(async (tx) => {
    const created = await tx.webhookEndpoint.create({
      data: { id: newId("whep"), ...inScope(scope), url: data.url, secret, eventTypes: [...new Set(data.events)], description: data.description ?? null },
    });
    await recordChange(tx, created, "created", actor);
    return created;
  });
  return { endpoint, secret };
}

/** What changed an endpoint, as its history record says. */
type EndpointAction = "created" | "updated" | "enabled" | "disabled" | "secret_rotated" | "deleted";

/** Records a change of `endpoint` (as it is after it) as `actor`'s. */
function recordChange(
  tx: P.TransactionClient,
  endpoint: WebhookEndpoint,
  action: EndpointAction,
  actor: Actor,
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordSecurityEvent(tx, endpoint.merchantId, "webhook_endpoint_changed", actor, {
    endpointId: endpoint.id,
    action,
    url: endpoint.url,
    mode: modeName(endpoint.livemode),
    ...more,
  });
}

/** One page of `scope`'s endpoints, newest first. */
export async function listWebhookEndpoints(
  prisma: Prisma,
  scope: Scope,
  params: WebhookEndpointListQuery,
  end: PageEnd = "newest",
): Promise<Page<WebhookEndpoint>> {
  return keysetPage(
    "webhook endpoint",
    params,
    (id) => prisma.webhookEndpoint.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.webhookEndpoint.findMany({ where: { AND: [inScope(scope), q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** How many endpoints `scope` has (GraphQL's `totalCount`). */
export function countWebhookEndpoints(prisma: Prisma, scope: Scope): Promise<number> {
  return prisma.webhookEndpoint.count({ where: inScope(scope) });
}

/** Every endpoint of a merchant in both modes, oldest first (the settings command's overview). */
export function merchantWebhookEndpoints(prisma: Prisma, merchantId: string): Promise<WebhookEndpoint[]> {
  return prisma.webhookEndpoint.findMany({ where: { merchantId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** One of `scope`'s endpoints; 404 `resource_missing` for any other. `query` as a GraphQL selection gives it. */
export async function getWebhookEndpoint(
  prisma: Prisma,
  scope: Scope,
  id: string,
  query: { include?: P.WebhookEndpointInclude } = {},
): Promise<WebhookEndpoint> {
  const endpoint = await prisma.webhookEndpoint.findFirst({ ...query, where: { id, ...inScope(scope) } });
  if (!endpoint) throw notFound("webhook endpoint", id);
  return endpoint;
}

/** Whose an endpoint is (the settings command acts on any merchant's, by id). */
export async function webhookEndpointScope(prisma: Prisma, id: string): Promise<Scope> {
  const endpoint = await prisma.webhookEndpoint.findUnique({ where: { id }, select: { merchantId: true, livemode: true } });
  if (!endpoint) throw notFound("webhook endpoint", id);
  return endpoint;
}

/**
 * Changes an endpoint's URL (same checks as on creation), event types or description, or stops
 * (`status: "disabled"`) or resumes deliveries; resuming sends what waited meanwhile. `actor`'s in the history.
 */
export async function updateWebhookEndpoint(
  prisma: Prisma,
  scope: Scope,
  id: string,
  data: WebhookEndpointUpdate,
  actor: Actor,
  resolve: Resolver = systemResolver,
  now = new Date(),
): Promise<WebhookEndpoint> {
  const endpoint = await getWebhookEndpoint(prisma, scope, id);
  if (data.url !== undefined) await checkWebhookUrl(data.url, endpoint.livemode, resolve);
  const status =
    data.status === undefined || (data.status === "disabled") === (endpoint.disabledAt !== null)
      ? {}
      : data.status === "enabled"
        ? { disabledAt: null, disabledReason: null }
        : { disabledAt: now, disabledReason: "disabled by the merchant" };
  const changes = { url: data.url, events: data.events, description: data.description, status: "disabledAt" in status ? data.status : undefined };
  const changed = Object.keys(changes).filter((k) => changes[k as keyof typeof changes] !== undefined);
  // A pause or a resume alone says so; any other change is an update, listing what it changed.
  const action: EndpointAction = changed.length === 1 && changes.status !== undefined ? changes.status : "updated";
  const more = { changed, ...(data.url !== undefined && data.url !== endpoint.url && { previousUrl: endpoint.url }) };
  return writeEndpoint(
    prisma,
    scope,
    id,
    {
      ...(data.url !== undefined && { url: data.url }),
      ...(data.events !== undefined && { eventTypes: [...new Set(data.events)] }),
      ...(data.description !== undefined && { description: data.description }),
      ...status,
    },
    // A request that changes nothing leaves no record.
    changed.length > 0 ? { action, actor, more } : null,
  );
}

/**
 * Gives an endpoint a new secret, `actor`'s in the history. The old one keeps signing next to it for `overlapHours`
 * (0 = it stops at once, for a leaked secret). Returns the new secret, shown this once.
 */
export async function rotateWebhookSecret(
  prisma: Prisma,
  scope: Scope,
  id: string,
  { overlapHours }: WebhookSecretRotation,
  actor: Actor,
  now = new Date(),
): Promise<EndpointCreated> {
  const endpoint = await getWebhookEndpoint(prisma, scope, id);
  const secret = newWebhookSecret();
  const updated = await writeEndpoint(
    prisma,
    scope,
    id,
    {
      secret,
      previousSecret: overlapHours > 0 ? endpoint.secret : null,
      previousSecretExpiresAt: overlapHours > 0 ? new Date(now.getTime() + overlapHours * 3_600_000) : null,
    },
    { action: "secret_rotated", actor, more: { overlapHours } },
  );
  return { endpoint: updated, secret };
}

/**
 * An endpoint that answered 410 Gone on `answeredAt` asks never to be sent anything again: disabled,
 * saying why, and recorded in the history with no user (the service did it).
 */
export async function disableGoneEndpoint(prisma: Prisma, id: string, answeredAt: Date, now = new Date()): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const [disabled] = await tx.webhookEndpoint.updateManyAndReturn({
      where: { id, disabledAt: null },
      data: { disabledAt: now, disabledReason: `the endpoint answered 410 Gone on ${answeredAt.toISOString()}` },
    });
    if (disabled) await recordChange(tx, disabled, "disabled", OPERATOR_ACTOR, { reason: "gone" });
  });
}

/** Removes an endpoint and its pending deliveries (the events stay), `actor`'s in the history. */
export async function deleteWebhookEndpoint(prisma: Prisma, scope: Scope, id: string, actor: Actor): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const endpoint = await tx.webhookEndpoint.findFirst({ where: { id, ...inScope(scope) } });
    const { count } = await tx.webhookEndpoint.deleteMany({ where: { id, ...inScope(scope) } });
    if (!endpoint || count === 0) throw notFound("webhook endpoint", id);
    await recordChange(tx, endpoint, "deleted", actor);
  });
}

/** Writes `data` to one of `scope`'s endpoints, recording the `change` (if any); 404 if it is gone (deleted since it was read). */
async function writeEndpoint(
  prisma: Prisma,
  scope: Scope,
  id: string,
  data: P.WebhookEndpointUpdateManyMutationInput,
  change: { action: EndpointAction; actor: Actor; more: Record<string, unknown> } | null,
): Promise<WebhookEndpoint> {
  return prisma.$transaction(async (tx) => {
    const [updated] = await tx.webhookEndpoint.updateManyAndReturn({ where: { id, ...inScope(scope) }, data });
    if (!updated) throw notFound("webhook endpoint", id);
    if (change) await recordChange(tx, updated, change.action, change.actor, change.more);
    return updated;
  });
}

/** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
export function signingSecrets(e: Pick<WebhookEndpoint, "secret" | "previousSecret" | "previousSecretExpiresAt">, now: Date): string[] {
  return e.previousSecret && e.previousSecretExpiresAt && e.previousSecretExpiresAt > now ? [e.secret, e.previousSecret] : [e.secret];
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
