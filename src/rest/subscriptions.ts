// REST subscriptions (.docs/subscriptions.md). Rules live in domain/subscriptions.ts and
// domain/subscription-endings.ts; the buyer's side is the checkout and manage pages.
import type { FastifyInstance } from "fastify";
import { cancelSubscription, updateSubscription } from "../domain/subscription-endings.js";
import { cancelSchema, createSchema, listSchema, updateSchema } from "../domain/subscription-requests.js";
import {
  createSubscription,
  getSubscription,
  listSubscriptions,
  type Subscription,
  SubscriptionResource,
  subscriptionResource,
} from "../domain/subscriptions.js";
import { parseInput } from "../domain/validation.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Subscriptions";

type IdParams = { Params: { id: string } };

/** Registers the subscription endpoints. */
export function subscriptionRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const shape = (s: Subscription) => subscriptionResource(s, settings);

  const create = {
    group: "create",
    doc: {
      operationId: "createSubscription",
      summary: "Subscribe a customer to a plan: INCOMPLETE until the buyer authorizes it at checkoutUrl",
      description:
        "Starts a subscription (INCOMPLETE) with the plan's amount and period and your fee, fixed from now on; `trialDays` (0–730) overrides the plan's trial. Send the buyer to `checkoutUrl` (also emailed to the customer when `emailInvoices` is on): they authorize it once from their wallet within 23 hours, else it becomes INCOMPLETE_EXPIRED. An unknown customer or plan is 400 `resource_missing`, a retired plan 409 `plan_inactive`; a live one needs a live settlement wallet and an enabled live chain. Sends `subscription.created`.",
      tag,
      body: createSchema,
      example: { customerId: "cus_…", planId: "plan_…" },
      ok: { 201: SubscriptionResource },
      errors: ["plan_inactive", "settlement_wallet_missing", "chain_unsupported"],
    },
  } as const;
  app.post("/v1/subscriptions", { config: create }, async (req, reply) => {
    return reply.code(201).send(shape(await createSubscription(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}), settings)));
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listSubscriptions",
      summary: "List subscriptions, newest first (status, customerId, planId)",
      description: "Newest first, paged by cursor; filtered by `status`, `customerId` or `planId`.",
      tag,
      query: listSchema,
      ok: { 200: listOf(SubscriptionResource) },
    },
  } as const;
  app.get("/v1/subscriptions", { config: list }, async (req) => {
    const { data, hasMore } = await listSubscriptions(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map(shape), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getSubscription",
      summary: "Retrieve a subscription",
      description: "The subscription: its status, current period (by the chain's clock), payer and links.",
      tag,
      ok: { 200: SubscriptionResource },
    },
  } as const;
  app.get<IdParams>("/v1/subscriptions/:id", { config: retrieve }, async (req) => shape(await getSubscription(prisma, scopeOf(req), req.params.id)));

  const update = {
    group: "create",
    doc: {
      operationId: "updateSubscription",
      summary: "Change a subscription's metadata, or cancel it at its period's end (cancelAtPeriodEnd)",
      description:
        "Merges `metadata`. `cancelAtPeriodEnd: true` cancels it when the current period ends (one not authorized yet, which has no period, is canceled now); `false` takes that back. Changing `cancelAtPeriodEnd` of an ended subscription is 409 `subscription_not_cancelable`. Sends `subscription.updated` (or `subscription.canceled`).",
      tag,
      body: updateSchema,
      example: { cancelAtPeriodEnd: true },
      ok: { 200: SubscriptionResource },
      errors: ["subscription_not_cancelable"],
    },
  } as const;
  app.patch<IdParams>("/v1/subscriptions/:id", { config: update }, async (req) =>
    shape(await updateSubscription(prisma, scopeOf(req), req.params.id, parseInput(updateSchema, req.body ?? {}), settings)),
  );

  const cancel = {
    group: "create",
    doc: {
      operationId: "cancelSubscription",
      summary: "Cancel a subscription, now (default) or at the end of its period (atPeriodEnd)",
      description:
        'Cancels it now: CANCELED with `cancelReason: "requested"`, no further pull (sends `subscription.canceled`); with `atPeriodEnd: true`, when the current period ends (sends `subscription.updated`). The buyer\'s permission stays on chain until they revoke it, but it is never pulled again. An ended subscription is 409 `subscription_not_cancelable`.',
      tag,
      body: cancelSchema,
      example: { atPeriodEnd: true },
      ok: { 200: SubscriptionResource },
      errors: ["subscription_not_cancelable"],
    },
  } as const;
  app.post<IdParams>("/v1/subscriptions/:id/cancel", { config: cancel }, async (req) => {
    const { atPeriodEnd } = parseInput(cancelSchema, req.body ?? {});
    return shape(await cancelSubscription(prisma, scopeOf(req), req.params.id, { atPeriodEnd: atPeriodEnd ?? false, reason: "requested" }, settings));
  });
}
