// Settlement, the database side: which clones hold confirmed money that is not flushed yet, and what
// a confirmed flush does to their charges. The chain side (signing, sending, tracking) is
// jobs/flushes.ts.
//
// A clone is due when its charge is past PENDING (RECEIVED, an underpaid EXPIRED, or late money on
// a final charge), its confirmed `amountReceived` exceeds `settledAmount`, it is deployed and no
// flush of it is in flight. A confirmed flush adds what its Flushed event moved (net + fee) to
// `settledAmount`, so a clone is never flushed twice for the same money, and money that arrives
// later makes it due again.
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { nextStatus } from "./charge-lifecycle.js";
import { type ChangeSettings, type Charge, CHARGE_COLUMNS, chargeResource } from "./charges.js";
import { recordEvents } from "./events.js";
import { formatAmount } from "./money.js";

/** What a clone's Flushed event reported. */
export interface Flushed {
  net: bigint;
  fee: bigint;
}

/** How long a clone whose flush did not pay it (reverted, or no Flushed event) waits before it is tried again. */
export const FLUSH_RETRY_MS = 60_000;

/** Up to `limit` clones of `chainId` that hold confirmed, unflushed money, oldest charge first. */
export async function dueClones(prisma: Prisma, chainId: number, limit: number, now = new Date()): Promise<{ id: string; cloneAddress: string }[]> {
  // The predicate matches the partial index over charges with unflushed money.
  return prisma.$queryRaw`
    SELECT id, clone_address AS "cloneAddress" FROM charges
    WHERE chain_id = ${chainId} AND amount_received > settled_amount AND status <> 'PENDING'
      AND flush_id IS NULL AND deployed_at IS NOT NULL AND (flush_retry_at IS NULL OR flush_retry_at <= ${now})
    ORDER BY created_at LIMIT ${limit}`;
}

/**
 * Records a signed flush of `chargeIds` before it is broadcast. Returns false (and records nothing)
 * if one of them is already in a flush.
 */
export async function recordFlush(
  prisma: Prisma,
  flush: { id: string; chainId: number; nonce: number; rawTx: string; txHash: string },
  chargeIds: string[],
): Promise<boolean> {
  return prisma
    .$transaction(async (tx) => {
      await tx.flush.create({ data: { id: flush.id, chainId: flush.chainId, nonce: flush.nonce, rawTx: flush.rawTx, txHashes: [flush.txHash] } });
      const claimed = await tx.charge.updateMany({ where: { id: { in: chargeIds }, flushId: null }, data: { flushId: flush.id } });
      if (claimed.count !== chargeIds.length) throw new FlushConflict();
      return true;
    })
    .catch((e) => {
      if (e instanceof FlushConflict) return false;
      throw e;
    });
}

class FlushConflict extends Error {}

/** Releases the charges of a flush that will never be mined (reverted, or its nonce went elsewhere). */
export async function failFlush(prisma: Prisma, flushId: string, reason: string, retryAt: Date | null): Promise<void> {
  await prisma.$transaction([
    prisma.flush.update({ where: { id: flushId }, data: { status: "FAILED", lastError: reason } }),
    prisma.charge.updateMany({ where: { flushId }, data: { flushId: null, flushRetryAt: retryAt } }),
  ]);
}

/**
 * Applies a confirmed flush, once: each charge it paid gains the flushed net and fee, its
 * `flushTxHash`, and a RECEIVED charge becomes COMPLETED (`charge.completed`, with `overpaidAmount`).
 * A charge the flush did not pay (no Flushed event for its clone) is released to be tried again.
 * Returns the charges that changed, or null if the flush had already been applied.
 */
export async function applyFlush(
  prisma: Prisma,
  settings: ChangeSettings,
  flushId: string,
  txHash: string,
  flushed: ReadonlyMap<string, Flushed>,
  now = new Date(),
): Promise<Charge[] | null> {
  const applied = await prisma.$transaction(async (tx) => {
    // Only a MINED flush is applied, and applying it makes it CONFIRMED: a second call does nothing.
    const marked = await tx.flush.updateMany({ where: { id: flushId, status: "MINED" }, data: { status: "CONFIRMED" } });
    if (marked.count === 0) return null;
    const charges = await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE flush_id = ${flushId} ORDER BY id FOR UPDATE`;
    const changed: Charge[] = [];
    const events = [];
    for (const charge of charges) {
      const paid = charge.cloneAddress ? flushed.get(charge.cloneAddress) : undefined;
      if (!paid) {
        await tx.charge.update({ where: { id: charge.id }, data: { flushId: null, flushRetryAt: new Date(now.getTime() + FLUSH_RETRY_MS) } });
        continue;
      }
      const data: P.ChargeUncheckedUpdateInput = {
        flushId: null,
        flushRetryAt: null,
        settledAmount: charge.settledAmount + paid.net + paid.fee,
        feeAmount: (charge.feeAmount ?? 0n) + paid.fee,
        netAmount: (charge.netAmount ?? 0n) + paid.net,
        flushTxHash: txHash,
      };
      if (charge.status === "RECEIVED") {
        data.status = nextStatus(charge, "complete", now);
        data.completedAt = now;
      }
      const updated = await tx.charge.update({ where: { id: charge.id }, data });
      changed.push(updated);
      if (updated.status === "COMPLETED" && charge.status === "RECEIVED") {
        const overpaid = (updated.amountReceived ?? 0n) - updated.amount;
        events.push({
          scope: updated,
          type: "charge.completed" as const,
          data: { ...chargeResource(updated, settings), overpaidAmount: formatAmount(overpaid > 0n ? overpaid : 0n) },
        });
      }
    }
    return { changed, recorded: await recordEvents(tx, events) };
  });
  if (!applied) return null;
  settings.feed?.changed(applied.changed, applied.recorded);
  return applied.changed;
}
