// Subscriptions (.docs/subscriptions.md): a customer's recurring billing on a plan, pulled each period
// from the payer's own wallet under a spend permission (chain/subscriptions.ts), never held.
//
//   INCOMPLETE ──authorized──▶ TRIALING ──first pull──▶ ACTIVE ⇄ PAST_DUE ──retries spent──▶ CANCELED
//       │                         │                       │  ╲──────────────────────────────▶ CANCELED
//       └──23 h──▶ INCOMPLETE_EXPIRED                      └── cancel, revoke on chain ─────▶ CANCELED
//
// Invariants:
// - periods are fixed windows by the chain's clock, the same as the permission's on chain:
//   [start + k * periodSeconds, start + (k + 1) * periodSeconds); a month is 30 days, a year 365;
// - each period is one invoice (billingReason subscription_create, then subscription_cycle), paid by
//   one pull; its ledger rows come from the pull's chain facts (payment, fee, payout), like a charge's;
// - the amount, period length and fee are fixed at creation: a plan's later changes never reach it;
// - money goes only where the payer's signature says: the merchant wallet and the fee recipient.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Plan, Prisma as P, Subscription } from "../generated/prisma/client.js";
import { buyerSender, enqueueBuyerEmail, subjectName } from "./buyer-emails.js";
import type { ExpiryChain } from "./charges/settings.js";
import { AppError, notFound, unknownReference } from "./errors.js";
import { type EventType, type RecordedEvent, recordEvent } from "./events.js";
import { newId, randomBase62 } from "./ids.js";
import { MetadataShape, mergeMetadata, storedMetadata } from "./metadata.js";
import { formatAmount } from "./money.js";
import { countsByParent, keysetPage, type Page, type PageEnd, pagesByParent, type Position, type RelatedRows, type Relation } from "./paging.js";
import { inScope, type Scope } from "./scope.js";
import { assertLiveReady } from "./live-chains.js";
import {
  SUBSCRIPTION_STATUSES,
  type SubscriptionFilters,
  type SubscriptionListQuery,
  type SubscriptionRequest,
  trialDaysField,
} from "./subscription-requests.js";

export type { Plan, Subscription };

export const PLAN_INTERVALS = ["day", "week", "month", "year"] as const;
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

// Defined with the requests that name them; plans and the GraphQL door find them here with the rest of the subscription.
export { SUBSCRIPTION_STATUSES, trialDaysField };
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** How long a buyer has to authorize a new subscription (then INCOMPLETE_EXPIRED). */
export const CHECKOUT_WINDOW_MS = 23 * 3_600_000;

const INTERVAL_SECONDS: Record<PlanInterval, number> = { day: 86_400, week: 7 * 86_400, month: 30 * 86_400, year: 365 * 86_400 };

/** A period's length in seconds: fixed windows, as the contract counts them (a chain has no calendar). */
export function periodSeconds(interval: PlanInterval, intervalCount: number): number {
  return INTERVAL_SECONDS[interval] * intervalCount;
}

/** Where a subscription's pages live. */
export interface SubscriptionSettings {
  /** PAYMENT_BASE_URL: checkout at `{paymentBaseUrl}/subscribe/<id>`. */
  paymentBaseUrl: string;
}

export const PlanResource = z.object({
  id: z.string(),
  object: z.literal("plan"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  name: z.string().describe("What the buyer subscribes to."),
  amount: z.string().describe("USDC billed each period; fixed for the plan's life."),
  currency: z.literal("USDC").describe('Always "USDC".'),
  interval: z.enum(PLAN_INTERVALS).describe("The period's unit."),
  intervalCount: z.number().int().describe("How many units a period lasts (a year at most in total)."),
  trialDays: z.number().int().describe("The default trial of its subscriptions, in days (0: none)."),
  active: z.boolean().describe("False once retired: it starts no new subscription; existing ones go on."),
  metadata: MetadataShape.nullable().describe("Your key-value pairs."),
  createdAt: z.string().describe("When it was created."),
});
export type PlanResource = z.infer<typeof PlanResource>;

/** Shapes a stored plan as the API shows it. */
export function planResource(p: Plan): PlanResource {
  return {
    id: p.id,
    object: "plan",
    livemode: p.livemode,
    name: p.name,
    amount: formatAmount(p.amount),
    currency: "USDC",
    interval: p.interval as PlanInterval,
    intervalCount: p.intervalCount,
    trialDays: p.trialDays,
    active: p.active,
    metadata: storedMetadata(p.metadata, "plans.metadata"),
    createdAt: p.createdAt.toISOString(),
  };
}

export const SubscriptionResource = z.object({
  id: z.string(),
  object: z.literal("subscription"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  customerId: z.string(),
  planId: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES).describe("Where the subscription is in its lifecycle."),
  amount: z.string().describe("USDC pulled each period (the plan's amount at creation)."),
  currency: z.literal("USDC").describe('Always "USDC".'),
  chainId: z.number().int().nullable().describe("The chain the payer authorized on (null until checkout)."),
  payer: z.string().nullable().describe("The wallet the money is pulled from."),
  contractAddress: z.string().nullable().describe("The subscription contract (SubscriptionsV1) on its chain: what the payer's USDC allowance is given to."),
  currentPeriodStart: z.string().nullable().describe("When the current period started, by the chain's clock."),
  currentPeriodEnd: z.string().nullable().describe("When it renews, by the chain's clock."),
  trialEnd: z.string().nullable().describe("When the trial ends, if it has one."),
  cancelAtPeriodEnd: z.boolean().describe("It ends when the current period does."),
  canceledAt: z.string().nullable().describe("When it was canceled."),
  cancelReason: z.string().nullable().describe("Why it ended: requested, customer, period_end, payment_failed or revoked_by_payer."),
  latestInvoiceId: z.string().nullable().describe("The invoice of its latest period."),
  checkoutUrl: z.string().describe("Where the buyer authorizes it: {PAYMENT_BASE_URL}/subscribe/<id>."),
  manageUrl: z.string().describe("The buyer's capability link: status, invoices, cancel, revoke on chain."),
  metadata: MetadataShape.nullable().describe("Your key-value pairs."),
  createdAt: z.string().describe("When it was created."),
});
export type SubscriptionResource = z.infer<typeof SubscriptionResource>;

/** The checkout page of a subscription. */
export function checkoutUrl(s: Pick<Subscription, "id">, settings: SubscriptionSettings): string {
  return `${settings.paymentBaseUrl}/subscribe/${s.id}`;
}

/** The buyer's manage page (the token is the capability). */
export function manageUrl(s: Pick<Subscription, "id" | "manageToken">, settings: SubscriptionSettings): string {
  return `${checkoutUrl(s, settings)}/manage?token=${s.manageToken}`;
}

/** Shapes a stored subscription as the API shows it. */
export function subscriptionResource(s: Subscription, settings: SubscriptionSettings): SubscriptionResource {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    id: s.id,
    object: "subscription",
    livemode: s.livemode,
    customerId: s.customerId,
    planId: s.planId,
    status: s.status,
    amount: formatAmount(s.amount),
    currency: "USDC",
    chainId: s.chainId,
    payer: s.payer,
    contractAddress: s.contractAddress,
    currentPeriodStart: iso(s.currentPeriodStart),
    currentPeriodEnd: iso(s.currentPeriodEnd),
    trialEnd: iso(s.trialEnd),
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    canceledAt: iso(s.canceledAt),
    cancelReason: s.cancelReason,
    latestInvoiceId: s.latestInvoiceId,
    checkoutUrl: checkoutUrl(s, settings),
    manageUrl: manageUrl(s, settings),
    metadata: storedMetadata(s.metadata, "subscriptions.metadata"),
    createdAt: s.createdAt.toISOString(),
  };
}

/** Records a subscription event carrying the subscription as it now is, in `tx`. */
export function recordSubscriptionEvent(
  tx: P.TransactionClient,
  s: Subscription,
  type: Extract<EventType, `subscription.${string}` | "invoice.upcoming">,
  settings: SubscriptionSettings,
): Promise<RecordedEvent> {
  return recordEvent(tx, { merchantId: s.merchantId, livemode: s.livemode }, type, subscriptionResource(s, settings));
}

// ---- The merchant's side: creating, reading and listing subscriptions ----

/** What creating a subscription reads besides its pages' base: the enabled chains (a live one needs a mainnet among them). */
export interface CreateSubscriptionSettings extends SubscriptionSettings {
  chains?: readonly ExpiryChain[] | undefined;
}

const MANAGE_TOKEN_LENGTH = 32;

/** "every month", "every 3 weeks": a period in words, as the checkout email and pages say it. */
export function periodWords(interval: PlanInterval, intervalCount: number): string {
  return intervalCount === 1 ? `every ${interval}` : `every ${intervalCount} ${interval}s`;
}

/**
 * Starts a subscription of a customer to a plan: INCOMPLETE until the buyer authorizes it at
 * `checkoutUrl` (INCOMPLETE_EXPIRED after CHECKOUT_WINDOW_MS). Copies the plan's amount and period,
 * the merchant's fee and the trial (the plan's unless `trialDays` overrides it). 400 resource_missing
 * naming customerId or planId outside the scope, 409 plan_inactive for a retired plan; a live one
 * needs a live settlement wallet and an enabled live chain. Sends subscription.created and, when the
 * merchant emails invoices, the checkout link to the customer, in the same transaction.
 */
export async function createSubscription(
  prisma: Prisma,
  scope: Scope,
  data: SubscriptionRequest,
  settings: CreateSubscriptionSettings,
  now = new Date(),
): Promise<Subscription> {
  const [customer, plan] = await Promise.all([
    prisma.customer.findFirst({ where: { id: data.customerId, ...inScope(scope) }, select: { email: true } }),
    prisma.plan.findFirst({ where: { id: data.planId, ...inScope(scope) } }),
  ]);
  if (!customer) throw unknownReference("customer", data.customerId, "customerId");
  if (!plan) throw unknownReference("plan", data.planId, "planId");
  if (!plan.active) throw new AppError("plan_inactive", `Plan ${plan.id} was retired: new subscriptions cannot use it.`, "planId");
  await assertLiveReady(prisma, scope, settings.chains);
  return prisma.$transaction(async (tx) => {
    const { feeBps } = await tx.merchant.findUniqueOrThrow({ where: { id: scope.merchantId }, select: { feeBps: true } });
    const sub = await tx.subscription.create({
      data: {
        id: newId("sub"),
        ...inScope(scope),
        customerId: data.customerId,
        planId: plan.id,
        amount: plan.amount,
        periodSeconds: periodSeconds(plan.interval as PlanInterval, plan.intervalCount),
        feeBps,
        trialDays: data.trialDays ?? plan.trialDays,
        manageToken: randomBase62(MANAGE_TOKEN_LENGTH),
        expiresAt: new Date(now.getTime() + CHECKOUT_WINDOW_MS),
        metadata: jsonOrNull(mergeMetadata(null, data.metadata)),
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordSubscriptionEvent(tx, sub, "subscription.created", settings);
    await emailCheckout(tx, sub, plan, customer.email, settings);
    return sub;
  });
}

/** The checkout link, written to the customer when the merchant emails invoices (the subscription bills through them). */
async function emailCheckout(tx: P.TransactionClient, sub: Subscription, plan: Plan, to: string, settings: SubscriptionSettings): Promise<void> {
  const sender = await buyerSender(tx, sub.merchantId);
  if (!sender.emailInvoices || !to) return;
  const price = `${formatAmount(sub.amount)} USDC ${periodWords(plan.interval as PlanInterval, plan.intervalCount)}`;
  const facts: [string, string][] = [
    ["Plan", plan.name],
    ["Price", price],
  ];
  if (sub.trialDays > 0) facts.push(["Free trial", `${sub.trialDays} day${sub.trialDays === 1 ? "" : "s"}`]);
  await enqueueBuyerEmail(tx, sender, {
    type: "subscription_checkout",
    livemode: sub.livemode,
    to,
    subject: `Start your ${subjectName(sender)} subscription: ${price}`,
    content: {
      heading: `Your subscription to ${plan.name}`,
      paragraphs: [
        `${sender.name} invites you to subscribe to ${plan.name} for ${price}, until you cancel.`,
        "You authorize it once from your own wallet: each period's payment goes straight to the merchant, never more than this amount per period, and you can cancel or revoke it at any time.",
      ],
      facts,
      action: { label: "Review and subscribe", url: checkoutUrl(sub, settings) },
    },
    relatedId: sub.id,
  });
}

/** A subscription of `scope`, or 404; `query` reads the relations a GraphQL selection asks for with it. */
export async function getSubscription(
  prisma: Prisma | P.TransactionClient,
  scope: Scope,
  id: string,
  query: { include?: P.SubscriptionInclude } = {},
): Promise<Subscription> {
  const sub = await prisma.subscription.findFirst({ ...query, where: { id, ...inScope(scope) } });
  if (!sub) throw notFound("subscription", id);
  return sub;
}

function subscriptionFilter(scope: Scope, f: SubscriptionFilters): P.SubscriptionWhereInput {
  return {
    ...inScope(scope),
    ...(f.status && { status: f.status }),
    ...(f.customerId && { customerId: f.customerId }),
    ...(f.planId && { planId: f.planId }),
  };
}

/** How many subscriptions match the list's filters (GraphQL's `totalCount`). */
export function countSubscriptions(prisma: Prisma, scope: Scope, filters: SubscriptionFilters): Promise<number> {
  return prisma.subscription.count({ where: subscriptionFilter(scope, filters) });
}

/** One page of subscriptions, newest first, optionally of one status, customer or plan. */
export async function listSubscriptions(prisma: Prisma, scope: Scope, query: SubscriptionListQuery, end: PageEnd = "newest"): Promise<Page<Subscription>> {
  const { status, customerId, planId, ...page } = query;
  const where = subscriptionFilter(scope, { status, customerId, planId });
  return keysetPage(
    "subscription",
    page,
    (id) => locateSubscription(prisma, scope, id),
    (q) => prisma.subscription.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}

/** Where a cursor's subscription sits in the list, if the scope has it. */
function locateSubscription(prisma: Prisma, scope: Scope, id: string): Promise<Position | null> {
  return prisma.subscription.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } });
}

/** Customers' subscriptions, a page of each read for all at once (GraphQL's nested connections). */
export function customersSubscriptions(prisma: Prisma, scope: Scope, include?: P.SubscriptionInclude): RelatedRows<Subscription> {
  const relation: Relation = { table: "subscriptions", parent: "customer_id" };
  return {
    kind: "subscription",
    locate: (id) => locateSubscription(prisma, scope, id),
    pages: (ids, q) => pagesByParent(prisma, scope, relation, ids, q, (subIds) => prisma.subscription.findMany({ include, where: { id: { in: subIds } } })),
    counts: (ids) => countsByParent(prisma, scope, relation, ids),
  };
}
