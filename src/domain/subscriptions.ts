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
import type { Plan, Prisma as P, Subscription } from "../generated/prisma/client.js";
import { type EventType, type RecordedEvent, recordEvent } from "./events.js";
import { type Metadata, MetadataShape } from "./metadata.js";
import { formatAmount } from "./money.js";
import type { Scope } from "./scope.js";

export type { Plan, Subscription };

export const PLAN_INTERVALS = ["day", "week", "month", "year"] as const;
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

export const SUBSCRIPTION_STATUSES = ["INCOMPLETE", "INCOMPLETE_EXPIRED", "TRIALING", "ACTIVE", "PAST_DUE", "CANCELED"] as const;
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
  livemode: z.boolean(),
  name: z.string(),
  amount: z.string().describe("USDC billed each period, as a decimal string."),
  currency: z.literal("USDC"),
  interval: z.enum(PLAN_INTERVALS),
  intervalCount: z.number().int(),
  trialDays: z.number().int(),
  active: z.boolean(),
  metadata: MetadataShape.nullable(),
  createdAt: z.string(),
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
    metadata: p.metadata as Metadata | null,
    createdAt: p.createdAt.toISOString(),
  };
}

export const SubscriptionResource = z.object({
  id: z.string(),
  object: z.literal("subscription"),
  livemode: z.boolean(),
  customerId: z.string(),
  planId: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  amount: z.string().describe("USDC pulled each period (the plan's amount at creation)."),
  currency: z.literal("USDC"),
  chainId: z.number().int().nullable().describe("The chain the payer authorized on (null until checkout)."),
  payer: z.string().nullable().describe("The wallet the money is pulled from."),
  contractAddress: z.string().nullable().describe("SubscriptionsV1 on its chain: what the payer's USDC allowance is given to."),
  currentPeriodStart: z.string().nullable(),
  currentPeriodEnd: z.string().nullable(),
  trialEnd: z.string().nullable(),
  cancelAtPeriodEnd: z.boolean(),
  canceledAt: z.string().nullable(),
  cancelReason: z.string().nullable(),
  latestInvoiceId: z.string().nullable(),
  checkoutUrl: z.string().describe("Where the buyer authorizes it: {PAYMENT_BASE_URL}/subscribe/<id>."),
  manageUrl: z.string().describe("The buyer's capability link: status, invoices, cancel, revoke on chain."),
  metadata: MetadataShape.nullable(),
  createdAt: z.string(),
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
    metadata: s.metadata as Metadata | null,
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
