// Payouts, the database side: which clones hold confirmed money that is not paid out yet, claiming
// them for one of our flushes, and what happens when a payout cannot go through. The chain side
// (simulating, signing, sending, tracking) is jobs/flushes.ts; the money itself is only ever counted
// from the chain's Flushed events (domain/payments.ts), whoever sent the flush.
//
// A clone is due when its charge is past PENDING (RECEIVED, an underpaid EXPIRED or CANCELLED, or
// late money on a final charge), its confirmed `amountReceived` exceeds `settledAmount`, it is
// deployed, no flush of ours is in flight for it, no settlement of it is waiting for confirmations
// (someone else's flush is already paying it out), and its payout has not been stopped.
//
// Invariants: a clone is in at most one flush of ours at a time (`flushId`); a flush that does not
// pay a clone is counted against it only when nothing else paid it (a race with another flusher is
// no failure), and after MAX_FLUSH_FAILURES the payout stops (`flush_failing`) instead of paying gas
// forever; `charge.payout_blocked` is recorded once each time a payout becomes blocked.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { type ChangeSettings, type Charge, CHARGE_COLUMNS, chargeResource } from "./charges.js";
import { notFound } from "./errors.js";
import { recordEvents } from "./events.js";

/** Why money in a clone cannot be paid out now, as a charge shows it. */
export const PAYOUT_BLOCK_REASONS = [
  /** The token's issuer blacklisted the merchant's settlement wallet: it can receive nothing. */
  "wallet_blacklisted",
  /** The clone itself is blacklisted: it can send nothing. */
  "clone_blacklisted",
  /** The fee recipient is blacklisted. */
  "fee_recipient_blacklisted",
  /** The token is paused: no transfer moves until it is unpaused. */
  "token_paused",
  /** The token refuses the flush for another reason (checked without sending anything). */
  "flush_reverting",
  /** Our flushes kept failing on chain; payouts of this clone stopped until an operator retries. */
  "flush_failing",
] as const;

export type PayoutBlockReason = (typeof PAYOUT_BLOCK_REASONS)[number];

/** Flushes of ours in a row that may fail to pay a clone before its payout stops and alerts. */
export const MAX_FLUSH_FAILURES = 5;
/** A failed flush is tried again after this, doubled with each failure in a row. */
const FAILURE_RETRY_MS = 60_000;

/** A clone that holds confirmed money not paid out yet. */
export interface DueClone {
  id: string;
  cloneAddress: string;
  /** Where the clone pays the merchant (fixed in its code). */
  settlementWallet: string;
  payoutBlockedReason: string | null;
}

/** Up to `limit` clones of `chainId` due for a payout, oldest charge first. */
export async function dueClones(prisma: Prisma, chainId: number, limit: number, now = new Date()): Promise<DueClone[]> {
  // The predicate matches the partial index over charges with unflushed money.
  return prisma.$queryRaw`
    SELECT id, clone_address AS "cloneAddress", settlement_wallet AS "settlementWallet", payout_blocked_reason AS "payoutBlockedReason" FROM charges c
    WHERE chain_id = ${chainId} AND amount_received > settled_amount AND status <> 'PENDING'
      AND flush_id IS NULL AND deployed_at IS NOT NULL AND (flush_retry_at IS NULL OR flush_retry_at <= ${now})
      AND flush_failures < ${MAX_FLUSH_FAILURES}
      AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.charge_id = c.id AND s.status = 'SEEN')
    ORDER BY created_at LIMIT ${limit}`;
}

/** Claims `chargeIds` for our flush transaction `txId` (inside its recording); false if one is already in a flush. */
export async function claimForFlush(tx: P.TransactionClient, txId: string, chargeIds: string[]): Promise<boolean> {
  const claimed = await tx.charge.updateMany({ where: { id: { in: chargeIds }, flushId: null }, data: { flushId: txId } });
  return claimed.count === chargeIds.length;
}

/** How one of our flush transactions ended. */
export type FlushOutcome =
  /** Mined with success and confirmed: these clones' Flushed events are in it. */
  | { kind: "confirmed"; paid: ReadonlySet<string> }
  /** Mined and reverted: it paid no clone. */
  | { kind: "reverted" }
  /** Never mined (its nonce went to another transaction): nothing happened on chain. */
  | { kind: "dropped" };

/**
 * Releases the charges of our flush `txId` after `outcome`. A clone it did not pay counts a failure,
 * unless money already left it by someone else's flush; at MAX_FLUSH_FAILURES its payout stops
 * (`flush_failing`, logged at error, `charge.payout_blocked`). Returns the charges whose payout stopped.
 */
export async function releaseFlush(
  prisma: Prisma,
  settings: ChangeSettings,
  txId: string,
  outcome: FlushOutcome,
  logger: Logger,
  now = new Date(),
): Promise<Charge[]> {
  const result = await prisma.$transaction(async (tx) => {
    const charges = await tx.$queryRaw<(Charge & { settlingElsewhere: boolean })[]>`
      SELECT ${CHARGE_COLUMNS},
        amount_received <= settled_amount + (SELECT coalesce(sum(s.net_amount + s.fee_amount), 0) FROM settlements s WHERE s.charge_id = charges.id AND s.status = 'SEEN')
          AS "settlingElsewhere"
      FROM charges WHERE flush_id = ${txId} ORDER BY id FOR UPDATE`;
    const stopped: Charge[] = [];
    for (const { settlingElsewhere, ...charge } of charges) {
      const paid = outcome.kind === "confirmed" && charge.cloneAddress !== null && outcome.paid.has(charge.cloneAddress);
      if (paid || outcome.kind === "dropped" || settlingElsewhere) {
        await tx.charge.update({ where: { id: charge.id }, data: { flushId: null } });
        continue;
      }
      const failures = charge.flushFailures + 1;
      if (failures < MAX_FLUSH_FAILURES) {
        const retryAt = new Date(now.getTime() + FAILURE_RETRY_MS * 2 ** (failures - 1));
        await tx.charge.update({ where: { id: charge.id }, data: { flushId: null, flushFailures: failures, flushRetryAt: retryAt } });
        continue;
      }
      stopped.push(
        await tx.charge.update({
          where: { id: charge.id },
          data: { flushId: null, flushFailures: failures, flushRetryAt: null, ...blockedFields(charge, "flush_failing", now) },
        }),
      );
    }
    const events = await recordEvents(tx, newlyBlocked(charges, stopped, settings));
    return { stopped, events };
  });
  for (const c of result.stopped) {
    logger.error(
      { chargeId: c.id, chainId: c.chainId, clone: c.cloneAddress, failures: c.flushFailures },
      "payout stopped: our flushes of this clone kept failing; the money is safe in the clone (retry with: stablegate payouts retry <chargeId>)",
    );
  }
  settings.feed?.changed(result.stopped, result.events);
  return result.stopped;
}

/**
 * Marks the payouts of `chargeIds` blocked for `reason` (the token refuses them now, found without
 * sending anything) and looks again at `retryAt`. A charge that was not blocked yet records
 * `charge.payout_blocked`; one already blocked only has its reason brought up to date.
 */
export async function blockPayouts(
  prisma: Prisma,
  settings: ChangeSettings,
  chargeIds: string[],
  reason: PayoutBlockReason,
  retryAt: Date,
  now = new Date(),
): Promise<Charge[]> {
  if (chargeIds.length === 0) return [];
  const result = await prisma.$transaction(async (tx) => {
    const charges = await tx.$queryRaw<
      Charge[]
    >`SELECT ${CHARGE_COLUMNS} FROM charges WHERE id = ANY(${chargeIds}) AND flush_id IS NULL ORDER BY id FOR UPDATE`;
    const updated: Charge[] = [];
    for (const c of charges) {
      updated.push(await tx.charge.update({ where: { id: c.id }, data: { flushRetryAt: retryAt, ...blockedFields(c, reason, now) } }));
    }
    return { charges, updated, events: await recordEvents(tx, newlyBlocked(charges, updated, settings)) };
  });
  // Only a new or different reason is news to subscribers; the retry time is not.
  const was = new Map(result.charges.map((c) => [c.id, c.payoutBlockedReason]));
  settings.feed?.changed(
    result.updated.filter((c) => was.get(c.id) !== c.payoutBlockedReason),
    result.events,
  );
  return result.updated;
}

/** Puts off the payouts of `chargeIds` until `retryAt` (their clone is empty: someone else's flush is on its way). */
export async function deferPayouts(prisma: Prisma, chargeIds: string[], retryAt: Date): Promise<void> {
  if (chargeIds.length === 0) return;
  await prisma.charge.updateMany({ where: { id: { in: chargeIds }, flushId: null }, data: { flushRetryAt: retryAt } });
}

/** Lets a stopped (`flush_failing`) or waiting payout be tried at once: the operator's `stablegate payouts retry`. */
export async function retryPayout(prisma: Prisma, chargeId: string): Promise<Charge> {
  const charge = await prisma.charge.findUnique({ where: { id: chargeId } });
  if (!charge) throw notFound("charge", chargeId);
  // A token-side block (blacklist, pause) clears itself once a payout goes through; a stop does not.
  const reason = charge.payoutBlockedReason === "flush_failing" ? null : charge.payoutBlockedReason;
  return prisma.charge.update({
    where: { id: chargeId },
    data: { flushFailures: 0, flushRetryAt: null, payoutBlockedReason: reason, payoutBlockedAt: reason === null ? null : charge.payoutBlockedAt },
  });
}

function blockedFields(charge: Charge, reason: PayoutBlockReason, now: Date): { payoutBlockedReason: PayoutBlockReason; payoutBlockedAt: Date } {
  return { payoutBlockedReason: reason, payoutBlockedAt: charge.payoutBlockedAt ?? now };
}

/** `charge.payout_blocked` for each charge of `after` that was not blocked in `before`. */
function newlyBlocked(before: readonly Charge[], after: readonly Charge[], settings: ChangeSettings) {
  const was = new Map(before.map((c) => [c.id, c.payoutBlockedReason]));
  return after
    .filter((c) => c.payoutBlockedReason !== null && was.get(c.id) == null)
    .map((c) => ({ scope: c, type: "charge.payout_blocked" as const, data: chargeResource(c, settings) }));
}

/** Blocked payouts per chain and reason (`flush_failing` ones need an operator): what /metrics reports. */
export async function blockedPayouts(prisma: Prisma): Promise<{ chainId: number; reason: string; charges: number }[]> {
  // The predicate matches the partial index over blocked payouts.
  const rows = await prisma.$queryRaw<{ chainId: number; reason: string; charges: bigint }[]>`
    SELECT chain_id AS "chainId", payout_blocked_reason AS reason, count(*) AS charges FROM charges
    WHERE payout_blocked_reason IS NOT NULL GROUP BY chain_id, payout_blocked_reason ORDER BY 1, 2`;
  return rows.map((r) => ({ ...r, charges: Number(r.charges) }));
}
