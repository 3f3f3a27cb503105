// How a subscription ends, whoever ends it: the merchant (now or at the period's end), the buyer on
// the manage page, the engine (retries spent, period end reached, a revoke seen on chain). One
// transition, so that every ending writes the same fields, event and email.
//
// Invariants:
// - an ended subscription (CANCELED, INCOMPLETE_EXPIRED) never changes again and is never pulled:
//   nextPullAt is cleared in the same transaction;
// - a pull already on its way when it ends may still land: its money pays its invoice like any other
//   (the ledger follows the chain), but no later pull is made.
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Prisma as P, Subscription } from "../generated/prisma/client.js";
import { AppError, notFound } from "./errors.js";
import { mergeMetadata, storedMetadata } from "./metadata.js";
import type { Scope } from "./scope.js";
import { enqueueSubscriptionEmail } from "./subscription-emails.js";
import type { SubscriptionUpdate } from "./subscription-requests.js";
import { recordSubscriptionEvent, type SubscriptionSettings } from "./subscriptions.js";

/** Why a subscription was canceled (`cancelReason`). */
export type CancelReason = "requested" | "customer" | "period_end" | "payment_failed" | "revoked_by_payer";

const ENDED = new Set(["CANCELED", "INCOMPLETE_EXPIRED"]);

/** The subscription's row, locked until the transaction ends; 404 outside `scope` (or anywhere, without one). */
export async function lockSubscription(tx: P.TransactionClient, id: string, scope: Scope | null): Promise<Subscription> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM subscriptions WHERE id = ${id}
      AND (${scope === null} OR (merchant_id = ${scope?.merchantId ?? ""} AND livemode = ${scope?.livemode ?? false})) FOR UPDATE`;
  if (!row) throw notFound("subscription", id);
  return tx.subscription.findUniqueOrThrow({ where: { id } });
}

/**
 * Cancels a subscription for the merchant ("requested") or the buyer ("customer"): now, or at the end
 * of the current period (an INCOMPLETE one has no period: it ends now). 409 subscription_not_cancelable
 * once it has ended.
 */
export async function cancelSubscription(
  prisma: Prisma,
  scope: Scope,
  id: string,
  options: { atPeriodEnd: boolean; reason: "requested" | "customer" },
  settings: SubscriptionSettings,
  now = new Date(),
): Promise<Subscription> {
  return prisma.$transaction(async (tx) => cancelLocked(tx, await lockSubscription(tx, id, scope), options, settings, now));
}

/** `cancelSubscription` on a row the caller locked in `tx`. */
async function cancelLocked(
  tx: P.TransactionClient,
  sub: Subscription,
  options: { atPeriodEnd: boolean; reason: "requested" | "customer" },
  settings: SubscriptionSettings,
  now: Date,
): Promise<Subscription> {
  assertNotEnded(sub);
  if (options.atPeriodEnd && sub.currentPeriodEnd) {
    if (sub.cancelAtPeriodEnd) return sub;
    const updated = await tx.subscription.update({ where: { id: sub.id }, data: { cancelAtPeriodEnd: true } });
    await recordSubscriptionEvent(tx, updated, "subscription.updated", settings);
    return updated;
  }
  return endSubscription(tx, sub, options.reason, settings, now);
}

function assertNotEnded(sub: Subscription): void {
  if (ENDED.has(sub.status)) throw new AppError("subscription_not_cancelable", `Subscription ${sub.id} has already ended (${sub.status})`, "id");
}

/**
 * The merchant's changes to a subscription: metadata (merged, at any time) and `cancelAtPeriodEnd`:
 * true cancels as `cancelSubscription(..., {atPeriodEnd: true})` does (an INCOMPLETE one, which has
 * no period yet, ends now), false takes a scheduled cancellation back. Changing when it ends is 409
 * subscription_not_cancelable once it has ended. Sends subscription.updated when anything changed.
 */
export async function updateSubscription(
  prisma: Prisma,
  scope: Scope,
  id: string,
  data: SubscriptionUpdate,
  settings: SubscriptionSettings,
  now = new Date(),
): Promise<Subscription> {
  return prisma.$transaction(async (tx) => {
    let sub = await lockSubscription(tx, id, scope);
    if (data.cancelAtPeriodEnd !== undefined) assertNotEnded(sub);
    const metadata = data.metadata === undefined ? undefined : mergeMetadata(storedMetadata(sub.metadata, "subscriptions.metadata"), data.metadata);
    const unschedule = data.cancelAtPeriodEnd === false && sub.cancelAtPeriodEnd;
    // Ending it (or scheduling its end) below sends its own event, with the metadata already in it.
    const ends = data.cancelAtPeriodEnd === true && !(sub.cancelAtPeriodEnd && sub.currentPeriodEnd);
    if (metadata !== undefined || unschedule) {
      sub = await tx.subscription.update({
        where: { id },
        data: { ...(metadata !== undefined && { metadata: jsonOrNull(metadata) }), ...(unschedule && { cancelAtPeriodEnd: false }), updatedAt: now },
      });
      if (!ends) await recordSubscriptionEvent(tx, sub, "subscription.updated", settings);
    }
    if (data.cancelAtPeriodEnd === true) sub = await cancelLocked(tx, sub, { atPeriodEnd: true, reason: "requested" }, settings, now);
    return sub;
  });
}

/** Ends `sub` (locked by the caller, not ended yet) with `reason`, in `tx`: CANCELED, no further pull, subscription.canceled and the subscriber's email. */
export async function endSubscription(
  tx: P.TransactionClient,
  sub: Subscription,
  reason: CancelReason,
  settings: SubscriptionSettings,
  now: Date,
): Promise<Subscription> {
  const ended = await tx.subscription.update({
    where: { id: sub.id },
    data: { status: "CANCELED", canceledAt: now, cancelReason: reason, nextPullAt: null },
  });
  await recordSubscriptionEvent(tx, ended, "subscription.canceled", settings);
  // A buyer who never authorized it was never subscribed: nothing to tell them.
  if (sub.status !== "INCOMPLETE") await enqueueSubscriptionEmail(tx, ended, { type: "subscription_canceled", reason }, settings);
  return ended;
}
