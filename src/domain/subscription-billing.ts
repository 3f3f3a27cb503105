// A subscription's billing: each period is one invoice, paid by one pull (jobs/subscriptions.ts sends
// it; the indexer posts its chain facts, domain/subscription-facts.ts). This module holds the state
// changes the pulls cause:
//
//   checkout pull succeeded  INCOMPLETE → TRIALING (trial: the first pull at trialEnd) or ACTIVE (period 0)
//   checkout pull failed     INCOMPLETE, permission cleared: the buyer signs again (the failed pull says why)
//   renewal succeeded        ACTIVE, period advanced, failedPulls 0 (a retry's success too)
//   renewal failed           PAST_DUE (invoice OPEN, invoice.payment_failed), a retry per the schedule
//                            within the window; none left → CANCELED payment_failed; revoked → CANCELED
//                            revoked_by_payer
//
// Invariants:
// - one invoice per subscription and period (a unique index); it is finalized with the invoice module's
//   numbering before its pull is claimed, and carries one charge (no deposit address: only the pull pays it);
// - the ledger follows the chain facts only: these transitions never post money;
// - every transition locks the subscription first and records its events in the same transaction;
// - a pull's outcome is applied once: only a pull still SENT (or SENDING) moves.
import type { Prisma } from "../db/client.js";
import { type Invoice, Prisma as P, type Subscription, type SubscriptionPull } from "../generated/prisma/client.js";
import type { ChargeSettings } from "./charges/settings.js";
import { chargeResource } from "./charges/resource.js";
import { AppError, notFound } from "./errors.js";
import { recordEvents } from "./events.js";
import { newId } from "./ids.js";
import { toUnits } from "./money.js";
import { finalizeDraft, invoiceResource, reopenReversedInvoice } from "./invoices.js";
import { enqueueSubscriptionEmail } from "./subscription-emails.js";
import { storedPermission } from "./subscription-permission.js";
import { endSubscription, lockSubscription } from "./subscription-endings.js";
import type { Scope } from "./scope.js";
import { recordSubscriptionEvent } from "./subscriptions.js";

/** What billing needs from the service settings (pages, charges' shape). */
export type BillingSettings = Pick<ChargeSettings, "paymentBaseUrl">;

/** Why a pull failed (SubscriptionPull.reason). */
export type PullFailure = "insufficient_balance" | "insufficient_allowance" | "blacklisted" | "paused" | "revoked" | "other";

/** The default SUBSCRIPTION_RETRY_SCHEDULE: 1 h, 1 day, 3 days, 5 days after each failure. */
export const DEFAULT_RETRY_SCHEDULE = "1h,1d,3d,5d";

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a retry schedule ("1h,1d,3d,5d": positive whole numbers of s, m, h or d, comma separated)
 * into milliseconds; throws naming the offending entry's position otherwise (never its text: a
 * misplaced secret must not reach a log).
 */
export function parseRetrySchedule(text: string): number[] {
  const entries = text.split(",").map((e) => e.trim());
  return entries.map((e, i) => {
    const m = /^([1-9][0-9]{0,5})([smhd])$/.exec(e);
    if (!m) throw new Error(`entry ${i + 1} is not a duration such as 30m, 1h or 3d (a comma-separated list of them is expected)`);
    return Number(m[1]) * UNIT_MS[m[2]!]!;
  });
}

/** A period of a subscription: its window on chain. */
export interface Period {
  index: number;
  start: Date;
  end: Date;
}

/** The window `index` of a subscription whose permission starts at `start` (Unix seconds). */
export function periodAt(start: bigint, periodSeconds: number, index: number): Period {
  const from = Number(start) + index * periodSeconds;
  return { index, start: new Date(from * 1000), end: new Date((from + periodSeconds) * 1000) };
}

/** An ACTIVE subscription's fields in `period`, its pull made: the next one due at the period's end. */
function activeIn(period: Period) {
  return {
    status: "ACTIVE",
    periodIndex: period.index,
    currentPeriodStart: period.start,
    currentPeriodEnd: period.end,
    nextPullAt: period.end,
    failedPulls: 0,
  } as const;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The invoice of `sub`'s `period`, finalized (OPEN, numbered) with its charge, made now unless it
 * exists (an OPEN one whose charge is no longer PENDING gets a new charge); `latestInvoiceId` points at it. In the caller's transaction, the subscription locked.
 */
export async function openPeriodInvoice(tx: P.TransactionClient, sub: Subscription, period: Period, settings: BillingSettings, now: Date): Promise<Invoice> {
  const scope = { merchantId: sub.merchantId, livemode: sub.livemode };
  let invoice = await tx.invoice.findFirst({ where: { subscriptionId: sub.id, periodIndex: period.index } });
  if (!invoice) {
    const plan = await tx.plan.findUniqueOrThrow({ where: { id: sub.planId }, select: { name: true } });
    const amount = sub.amount.toString();
    const draft = await tx.invoice.create({
      data: {
        id: newId("inv"),
        ...scope,
        customerId: sub.customerId,
        lineItems: [{ description: `${plan.name} ${day(period.start)} – ${day(period.end)}`, quantity: 1, unitAmount: amount, amount }],
        total: sub.amount,
        dueDate: period.start,
        subscriptionId: sub.id,
        billingReason: period.index === 0 ? "subscription_create" : "subscription_cycle",
        periodIndex: period.index,
        periodStart: period.start,
        periodEnd: period.end,
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordEvents(tx, [{ scope, type: "invoice.created", data: invoiceResource(draft, settings) }]);
    invoice = await finalizeDraft(tx, scope, draft.id, settings, now, "billing");
    await insertPeriodCharge(tx, sub, invoice, period, settings, now);
  } else if (invoice.status === "OPEN" && (await tx.charge.count({ where: { invoiceId: invoice.id, status: "PENDING" } })) === 0) {
    // Its charge was completed by a pull a deep reorg took away: a late payment to that charge would not
    // count for the invoice, so the pull made again pays a new one.
    await insertPeriodCharge(tx, sub, invoice, period, settings, now);
  }
  if (sub.latestInvoiceId !== invoice.id) await tx.subscription.update({ where: { id: sub.id }, data: { latestInvoiceId: invoice.id } });
  return invoice;
}

/**
 * The charge the ledger posts a period's pull to: the subscription's chain, the permission's merchant
 * wallet and fee, no deposit address; its chain is set, so selectChain refuses it (chain_already_selected)
 * and no one is shown an address to pay; open until the window ends (a pull can only land inside it).
 */
async function insertPeriodCharge(tx: P.TransactionClient, sub: Subscription, invoice: Invoice, period: Period, settings: BillingSettings, now: Date) {
  // The first charge's order is the invoice, as for every invoice charge; the completed charge keeps that
  // order id, so a replacement (after a deep reorg) is numbered after it.
  const earlier = await tx.charge.count({ where: { invoiceId: invoice.id } });
  const charge = await tx.charge.create({
    data: {
      id: newId("chrg"),
      merchantId: sub.merchantId,
      livemode: sub.livemode,
      customerId: sub.customerId,
      orderId: earlier === 0 ? invoice.id : `${invoice.id}-${earlier + 1}`,
      amount: sub.amount,
      feeBps: sub.feeBps,
      settlementWallet: sub.settlementWallet!,
      chainId: sub.chainId,
      description: `Invoice ${invoice.number}`,
      expiresAt: period.end,
      invoiceId: invoice.id,
      createdAt: now,
      updatedAt: now,
    },
  });
  await recordEvents(tx, [{ scope: charge, type: "charge.pending", data: chargeResource(charge, settings) }]);
}

/**
 * Applies a mined pull: SUCCEEDED; a checkout's moves the subscription to TRIALING or ACTIVE, a
 * renewal's to ACTIVE in its period with no failures counted. Returns the subscription, or null when
 * the pull was already applied.
 */
export async function pullSucceeded(prisma: Prisma, pullId: string, txHash: string, settings: BillingSettings): Promise<Subscription | null> {
  return prisma.$transaction(async (tx) => {
    const pull = await tx.subscriptionPull.findUniqueOrThrow({ where: { id: pullId } });
    const sub = await lockSubscription(tx, pull.subscriptionId, null);
    const moved = await tx.subscriptionPull.updateMany({ where: { id: pullId, status: { in: ["SENDING", "SENT"] } }, data: { status: "SUCCEEDED", txHash } });
    if (moved.count === 0) return null;
    // A pull that lands after the subscription ended still paid its invoice (the ledger shows it); nothing else moves.
    if (sub.status === "CANCELED" || sub.status === "INCOMPLETE_EXPIRED") return sub;
    const { start } = storedPermission(sub.permission);
    let data: P.SubscriptionUpdateInput;
    if (pull.checkout && toUnits(pull.amount) === 0n) {
      // The trial is the period before the permission's first window: authorization to trialEnd (= start).
      const trialStart = new Date(Number(start) * 1000 - sub.trialDays * 86_400_000);
      data = { status: "TRIALING", currentPeriodStart: trialStart, currentPeriodEnd: sub.trialEnd, nextPullAt: sub.trialEnd, failedPulls: 0 };
    } else {
      const period = periodAt(start, sub.periodSeconds, pull.periodIndex);
      data = activeIn(period);
    }
    const updated = await tx.subscription.update({ where: { id: sub.id }, data });
    await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
    return updated;
  });
}

/** A failed pull's outcome, as the job classified it. */
export interface FailedPull {
  reason: PullFailure;
  error: string;
  /** The chain's time when it failed: retries count from it. */
  at: Date;
}

/**
 * Records a checkout that cannot go through (its simulation or its transaction failed): a FAILED pull
 * with the reason (`pullId` null: none was claimed, one is written now), the permission cleared so the
 * buyer can authorize again; the subscription stays INCOMPLETE.
 */
export async function checkoutFailed(
  prisma: Prisma,
  subscriptionId: string,
  pullId: string | null,
  failure: FailedPull,
  settings: BillingSettings,
): Promise<Subscription | null> {
  return prisma.$transaction(async (tx) => {
    const sub = await lockSubscription(tx, subscriptionId, null);
    if (!(await failPull(tx, sub, pullId, true, failure))) return null;
    if (sub.status !== "INCOMPLETE") return sub;
    const updated = await tx.subscription.update({
      where: { id: sub.id },
      data: { permission: P.DbNull, permissionHash: null, permissionSignature: null, permit: P.DbNull, nextPullAt: null, trialEnd: null },
    });
    await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
    return updated;
  });
}

/**
 * Records a renewal that failed: a revoked permission ends the subscription at once; otherwise it
 * is PAST_DUE with the period's invoice still OPEN (invoice.payment_failed) and its next retry after
 * the schedule's next delay, unless none is left or it would fall after the window closes (then
 * CANCELED payment_failed).
 */
export async function renewalFailed(
  prisma: Prisma,
  subscriptionId: string,
  pullId: string | null,
  period: Period,
  failure: FailedPull,
  schedule: readonly number[],
  settings: BillingSettings,
): Promise<Subscription | null> {
  return prisma.$transaction(async (tx) => {
    const sub = await lockSubscription(tx, subscriptionId, null);
    if (!(await failPull(tx, sub, pullId, false, failure, period))) return null;
    if (sub.status === "CANCELED" || sub.status === "INCOMPLETE_EXPIRED") return sub;
    if (failure.reason === "revoked") return endSubscription(tx, sub, "revoked_by_payer", settings, failure.at);
    const failed = sub.failedPulls + 1;
    const delay = schedule[failed - 1];
    const retryAt = delay === undefined ? null : new Date(failure.at.getTime() + delay);
    const retries = retryAt !== null && retryAt < period.end;
    const invoice = await tx.invoice.findFirst({ where: { subscriptionId: sub.id, periodIndex: period.index } });
    if (invoice) {
      await recordEvents(tx, [{ scope: invoice, type: "invoice.payment_failed", data: invoiceResource(invoice, settings) }]);
      await enqueueSubscriptionEmail(tx, sub, { type: "invoice_payment_failed", invoice, reason: failure.reason, retryAt: retries ? retryAt : null }, settings);
    }
    if (!retries) return endSubscription(tx, sub, "payment_failed", settings, failure.at);
    const updated = await tx.subscription.update({
      where: { id: sub.id },
      data: {
        status: "PAST_DUE",
        failedPulls: failed,
        nextPullAt: retryAt,
        periodIndex: period.index,
        currentPeriodStart: period.start,
        currentPeriodEnd: period.end,
      },
    });
    await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
    return updated;
  });
}

/** Marks `pullId` FAILED (or writes a FAILED one when none was claimed); false when it was already settled. */
async function failPull(
  tx: P.TransactionClient,
  sub: Subscription,
  pullId: string | null,
  checkout: boolean,
  failure: FailedPull,
  period?: Period,
): Promise<SubscriptionPull | null> {
  const data = { status: "FAILED" as const, reason: failure.reason, error: failure.error.slice(0, 500) };
  if (pullId === null) {
    return tx.subscriptionPull.create({
      data: {
        id: newId("spull"),
        subscriptionId: sub.id,
        invoiceId: checkout ? null : sub.latestInvoiceId,
        chainId: sub.chainId!,
        periodIndex: period?.index ?? 0,
        amount: sub.amount,
        checkout,
        ...data,
      },
    });
  }
  const moved = await tx.subscriptionPull.updateMany({ where: { id: pullId, status: { in: ["SENDING", "SENT"] } }, data });
  return moved.count === 0 ? null : tx.subscriptionPull.findUniqueOrThrow({ where: { id: pullId } });
}

/** The checkout's latest failure, for its page: why the last authorization did not go through (null when none did not). */
export async function lastCheckoutFailure(db: Prisma, subscriptionId: string): Promise<{ reason: string; error: string | null; at: Date } | null> {
  const pull = await db.subscriptionPull.findFirst({ where: { subscriptionId, checkout: true }, orderBy: { createdAt: "desc" } });
  return pull?.status === "FAILED" ? { reason: pull.reason ?? "other", error: pull.error, at: pull.updatedAt } : null;
}

/**
 * The subscription a test helper may move along: in `scope`, test mode only (400 test_mode_only for a
 * live key), 404 outside it; `localChains` are the chains whose clock a test may move (the devnet):
 * one authorized elsewhere is 400 chain_unsupported.
 */
export async function subscriptionToAdvance(prisma: Prisma, scope: Scope, id: string, localChains: readonly number[]): Promise<Subscription> {
  if (scope.livemode)
    throw new AppError("test_mode_only", "Test helpers work in test mode only: use a test key (sk_test_…). A live subscription renews when its period ends.");
  const sub = await prisma.subscription.findFirst({ where: { id, ...scope } });
  if (!sub) throw notFound("subscription", id);
  if (sub.chainId !== null && !localChains.includes(sub.chainId)) {
    throw new AppError("chain_unsupported", `Subscription ${id} is on chain ${sub.chainId}, whose clock cannot be moved: only the local devnet's can.`, "id");
  }
  return sub;
}

/** INCOMPLETE subscriptions whose checkout window passed (none with a pull on its way) become INCOMPLETE_EXPIRED; returns how many. */
export async function expireCheckouts(prisma: Prisma, chainId: number, settings: BillingSettings, now: Date, limit = 100): Promise<number> {
  const expired = await prisma.subscription.findMany({
    where: { status: "INCOMPLETE", expiresAt: { lte: now }, pulls: { none: { status: { in: ["SENDING", "SENT"] } } }, OR: [{ chainId }, { chainId: null }] },
    select: { id: true },
    take: limit,
  });
  for (const { id } of expired) {
    await prisma.$transaction(async (tx) => {
      const sub = await lockSubscription(tx, id, null);
      if (sub.status !== "INCOMPLETE" || sub.expiresAt > now) return;
      const updated = await tx.subscription.update({ where: { id }, data: { status: "INCOMPLETE_EXPIRED", nextPullAt: null } });
      await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
    });
  }
  return expired.length;
}

/** invoice.upcoming is sent this long before a renewal (periods no longer than this get none). */
export const UPCOMING_MS = 3 * 86_400_000;

/**
 * invoice.upcoming (and its email) for the subscriptions of `chainId` renewing within three days of
 * `chainTime` (the chain's clock), once per period: upcomingNotifiedFor remembers the renewal told about.
 */
export async function announceUpcoming(prisma: Prisma, chainId: number, settings: BillingSettings, chainTime: Date, only?: string, limit = 100): Promise<void> {
  const soon = await prisma.subscription.findMany({
    where: {
      chainId,
      status: { in: ["TRIALING", "ACTIVE"] },
      cancelAtPeriodEnd: false,
      periodSeconds: { gt: UPCOMING_MS / 1000 },
      nextPullAt: { gt: chainTime, lte: new Date(chainTime.getTime() + UPCOMING_MS) },
      ...(only && { id: only }),
    },
    take: limit,
  });
  for (const s of soon) {
    if (s.upcomingNotifiedFor?.getTime() === s.nextPullAt!.getTime()) continue;
    await prisma.$transaction(async (tx) => {
      const sub = await lockSubscription(tx, s.id, null);
      if (!sub.nextPullAt || sub.upcomingNotifiedFor?.getTime() === sub.nextPullAt.getTime()) return;
      const updated = await tx.subscription.update({ where: { id: sub.id }, data: { upcomingNotifiedFor: sub.nextPullAt } });
      await recordSubscriptionEvent(tx, updated, "invoice.upcoming", settings);
      await enqueueSubscriptionEmail(tx, updated, { type: "invoice_upcoming", at: sub.nextPullAt }, settings);
    });
  }
}

/**
 * The subscriptions of `chainId` whose current period's pull a deep reorg took away (its payment
 * reversed in the ledger, none standing): the invoice OPEN again, PAST_DUE, the pull due again at
 * once (the reversal already flagged the charge for review). The contract allows it again while the window is open; once it closed, the
 * retry finds the window moved on and the subscription ends payment_failed. Returns their ids.
 */
export async function reopenReversedPulls(prisma: Prisma, chainId: number, settings: BillingSettings, chainTime: Date): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ id: string; invoiceId: string }[]>`
    SELECT DISTINCT s.id, i.id AS "invoiceId" FROM subscriptions s JOIN invoices i ON i.subscription_id = s.id AND i.period_index = s.period_index JOIN charges c ON c.invoice_id = i.id
    WHERE s.chain_id = ${chainId} AND s.status = 'ACTIVE' AND i.status IN ('OPEN', 'PAID') AND i.amount_paid < i.total
      AND EXISTS (SELECT 1 FROM chain_transfers t WHERE t.charge_id = c.id AND t.kind = 'PAYMENT' AND t.status = 'REVERSED')
      AND NOT EXISTS (SELECT 1 FROM chain_transfers t WHERE t.charge_id = c.id AND t.kind = 'PAYMENT' AND t.status <> 'REVERSED')
      AND NOT EXISTS (SELECT 1 FROM subscription_pulls p WHERE p.subscription_id = s.id AND p.status IN ('SENDING', 'SENT'))`;
  for (const { id, invoiceId } of rows) {
    await prisma.$transaction(async (tx) => {
      const sub = await lockSubscription(tx, id, null);
      if (sub.status !== "ACTIVE") return;
      // The ledger no longer pays it: the invoice is due again (its number and lines stay). A reversal
      // of the pull's charge has usually reopened it already; then this finds it OPEN and says nothing.
      const reopened = await reopenReversedInvoice(tx, invoiceId, settings, new Date());
      if (reopened) await recordEvents(tx, [reopened]);
      const updated = await tx.subscription.update({ where: { id }, data: { status: "PAST_DUE", nextPullAt: chainTime } });
      await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
    });
  }
  return rows.map((r) => r.id);
}

/**
 * A pull the contract says was already made for `period` (AlreadyPulled: our earlier transaction,
 * mined again after a reorg): the subscription is ACTIVE in that period; the ledger follows the
 * Pulled fact the indexer reads.
 */
export async function periodAlreadyPulled(prisma: Prisma, subscriptionId: string, period: Period, settings: BillingSettings): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const sub = await lockSubscription(tx, subscriptionId, null);
    if (sub.status === "CANCELED" || sub.status === "INCOMPLETE_EXPIRED") return;
    const updated = await tx.subscription.update({
      where: { id: sub.id },
      data: activeIn(period),
    });
    await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
  });
}

/** A pull of ours whose window another pull of ours took (a re-sent or raced one): FAILED, counting as no failure of the buyer's. */
export async function pullLost(prisma: Prisma, pullId: string): Promise<void> {
  await prisma.subscriptionPull.update({ where: { id: pullId }, data: { status: "FAILED", reason: "other", error: "another pull of ours took its window" } });
}

/**
 * Puts a renewal off until `until` without counting a failure: the service cannot pull now, which
 * is not the buyer's doing (nothing becomes PAST_DUE, no email is sent).
 */
export async function postponeRenewal(prisma: Prisma, subscriptionId: string, until: Date): Promise<void> {
  await prisma.subscription.updateMany({ where: { id: subscriptionId, status: { in: ["TRIALING", "ACTIVE", "PAST_DUE"] } }, data: { nextPullAt: until } });
}

/**
 * Claims a pull for `subscriptionId` in the transaction storing relayer transaction `txId`: the
 * period's invoice opened (not for a trial's checkout), a SubscriptionPull SENT with the transaction.
 * False (nothing stored or sent) when the subscription moved meanwhile.
 */
export async function claimPull(
  tx: P.TransactionClient,
  subscriptionId: string,
  txId: string,
  pull: { checkout: boolean; amount: bigint; period: Period | null; permissionHash: string | null },
  settings: BillingSettings,
  now: Date,
): Promise<boolean> {
  const sub = await lockSubscription(tx, subscriptionId, null);
  if (sub.permissionHash !== pull.permissionHash) return false;
  if (pull.checkout ? sub.status !== "INCOMPLETE" : !["TRIALING", "ACTIVE", "PAST_DUE"].includes(sub.status)) return false;
  if ((await tx.subscriptionPull.count({ where: { subscriptionId, status: { in: ["SENDING", "SENT"] } } })) > 0) return false;
  const invoice = pull.period ? await openPeriodInvoice(tx, sub, pull.period, settings, now) : null;
  await tx.subscriptionPull.create({
    data: {
      id: newId("spull"),
      subscriptionId,
      invoiceId: invoice?.id ?? null,
      chainId: sub.chainId!,
      periodIndex: pull.period?.index ?? 0,
      amount: pull.amount,
      checkout: pull.checkout,
      status: "SENT",
      txId,
    },
  });
  return true;
}
