// What a reorg deeper than the confirmations does to money (.docs/ledger.md): the indexer's rollback
// records every confirmed transfer above the fork as a re-check (reorg_rechecks, in the rollback's own
// transaction: domain/chain-transfers.ts `forgetSeenAbove`), and the indexer works them off against
// the node's receipts before it reads on. One whose transaction the node still holds unmined waits
// (the indexer does not, up to a bound: jobs/indexer.ts RECHECK_PENDING_MS), so a payment a reorg
// sent back to the mempool is not reversed, and its charge not reopened, for a block. One the chain re-included (perhaps at another log index, in
// another block) is the same transfer: only its position changes. One the chain no longer has is
// REVERSED: a reversal row undoes its ledger row, the money fields are derived again, and its charge
// needs review:
//
//   payment gone   amountReceived falls (a completed charge stays completed: someone must look); a
//                  RECEIVED charge nothing was paid out of, no longer paid by what is left, reopens:
//                  PENDING again, or EXPIRED when its time has passed (domain/charges/expire.ts)
//   payout gone    the money is back in the clone: it is due again, and the clone, whose deployment went
//                  with it, is deployed again by that payout (which the charge then shows as its flush)
//   refund gone    the refund waits for its payment again
//   any            the authorizations its transaction used are money on its way again until they expire
//
// Invariants: a re-check is marked done in the transaction that relocates or reverses its transfer,
// so none is lost to a crash or an RPC failure and none is applied twice; a transfer is reversed only
// while CONFIRMED, once. A transfer reversed and later re-included is seen anew and confirmed anew: a
// new ledger row, counted as the reversed one was (domain/payments.ts), so a restored payment is
// neither late nor new money.
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { ChargeTransitionError, nextStatus } from "./charges/lifecycle.js";
import type { ChangeSettings } from "./charges/settings.js";
import { type Charge, CHARGE_COLUMNS } from "./charges/read.js";
import { expireDueCharges } from "./charges/expire.js";
import { type NewEvent, recordEvents } from "./events.js";
import { reopenReversedInvoice } from "./invoices.js";
import { deriveMoney, postReversals } from "./ledger.js";
import { REFUND_INCLUDE, refundResource } from "./refunds.js";
import { flagForReview } from "./review.js";

/** Where a confirmed transfer the chain re-included sits now. */
export interface Relocation {
  id: string;
  blockNumber: bigint;
  blockHash: string;
  logIndex: number;
}

/** A confirmed transfer waiting to be checked against the chain after a reorg deeper than the confirmations. */
export interface PendingRecheck {
  id: string;
  transferId: string;
  txHash: string;
  factKey: string;
  /** The reorg, in words. */
  reason: string;
  /** When the rollback recorded it: how long its transaction may wait in the mempool counts from here. */
  createdAt: Date;
}

/** The open re-checks of `chainId`, oldest first. */
export async function pendingRechecks(prisma: Prisma, chainId: number): Promise<PendingRecheck[]> {
  return prisma.reorgRecheck.findMany({
    where: { chainId, doneAt: null },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, transferId: true, txHash: true, factKey: true, reason: true, createdAt: true },
  });
}

/** What the chain says of a re-checked transfer: where it sits now, or null when it is gone. */
export interface RecheckFinding {
  recheck: PendingRecheck;
  at: Relocation | null;
}

/**
 * Applies what the chain said of `findings`: re-included transfers move (one transaction), gone ones
 * are reversed (one transaction per charge); each re-check is done in the transaction that applies
 * it, and one whose transfer is no longer CONFIRMED is simply done. Returns the counts and the
 * charges reversed.
 */
export async function settleRechecks(
  prisma: Prisma,
  settings: ChangeSettings & { paymentBaseUrl: string },
  findings: readonly RecheckFinding[],
  now = new Date(),
): Promise<{ reincluded: number; reversed: Charge[] }> {
  const moved = findings.filter((f) => f.at !== null);
  await prisma.$transaction(async (tx) => {
    for (const { recheck, at } of moved) {
      const kept = await tx.chainTransfer.updateMany({
        where: { id: at!.id, status: "CONFIRMED" },
        data: { blockNumber: at!.blockNumber, blockHash: at!.blockHash, logIndex: at!.logIndex },
      });
      await tx.reorgRecheck.updateMany({
        where: { id: recheck.id, doneAt: null },
        data: { doneAt: now, outcome: kept.count > 0 ? "reincluded" : "settled" },
      });
    }
  });
  const gone = findings.filter((f) => f.at === null);
  const reversed: Charge[] = [];
  for (const why of new Set(gone.map((f) => f.recheck.reason))) {
    const mine = gone.filter((f) => f.recheck.reason === why);
    const rechecks = new Map(mine.map((f) => [f.recheck.transferId, f.recheck.id]));
    reversed.push(...(await reverseTransfers(prisma, settings, [...rechecks.keys()], why, now, rechecks)));
  }
  // Gone transfers that were not CONFIRMED any more (reversed already): nothing to do but say so.
  const left = gone.map((f) => f.recheck.id);
  if (left.length > 0) await prisma.reorgRecheck.updateMany({ where: { id: { in: left }, doneAt: null }, data: { doneAt: now, outcome: "settled" } });
  return { reincluded: moved.length, reversed };
}

/**
 * Reverses the confirmed transfers `ids` that the chain no longer has (see the top of this file),
 * one charge per transaction; `why` says what happened, for the review. `rechecks` (transfer id →
 * re-check id) are marked done in the transaction that reverses their transfer. Returns the charges
 * touched.
 */
export async function reverseTransfers(
  prisma: Prisma,
  settings: ChangeSettings & { paymentBaseUrl: string },
  ids: readonly string[],
  why: string,
  now = new Date(),
  rechecks: ReadonlyMap<string, string> = new Map(),
): Promise<Charge[]> {
  if (ids.length === 0) return [];
  const rows = await prisma.chainTransfer.findMany({ where: { id: { in: [...ids] }, status: "CONFIRMED" }, select: { chargeId: true } });
  const touched: Charge[] = [];
  for (const chargeId of new Set(rows.map((r) => r.chargeId))) {
    const done = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM charges WHERE id = ${chargeId} FOR UPDATE`;
      const gone = await tx.chainTransfer.updateManyAndReturn({
        where: { id: { in: [...ids] }, chargeId, status: "CONFIRMED" },
        data: { status: "REVERSED", reversedAt: now },
      });
      if (gone.length === 0) return null;
      const done = gone.map((t) => rechecks.get(t.id)).filter((id) => id !== undefined);
      if (done.length > 0) await tx.reorgRecheck.updateMany({ where: { id: { in: done }, doneAt: null }, data: { doneAt: now, outcome: "reversed" } });
      await postReversals(
        tx,
        gone.map((t) => t.id),
        now,
      );
      await deriveMoney(tx, [chargeId]);
      const events: NewEvent[] = [];
      // Refunds whose transfer is gone wait for one again.
      for (const t of gone.filter((g) => g.kind === "REFUND" && g.refundId !== null)) {
        const [back] = await tx.refund.updateManyAndReturn({
          where: { id: t.refundId!, status: "COMPLETED" },
          data: { status: "AWAITING_PAYMENT", txHash: null, completedAt: null, updatedAt: now },
        });
        if (back) {
          const refund = await tx.refund.findUniqueOrThrow({ where: { id: back.id }, include: REFUND_INCLUDE });
          // The reorg that took this fact away for the n-th time: replaying it gives the same event id (domain/events.ts).
          const n = await tx.chainTransfer.count({ where: { chainId: t.chainId, kind: t.kind, factKey: t.factKey, status: "REVERSED" } });
          events.push({ scope: refund, type: "refund.updated", data: refundResource(refund, settings), cause: `reversed ${t.chainId}:${t.factKey}#${n}` });
        }
      }
      // The authorizations those transactions spent may be spent again until they expire.
      const hashes = [...new Set(gone.map((t) => t.txHash))];
      await tx.authorization.updateMany({
        where: { chainId: gone[0]!.chainId, usedTxHash: { in: hashes } },
        data: { usedTxHash: null, usedBlock: null, endedAt: null, endReason: null, updatedAt: now },
      });
      // A clone whose every payout is gone lost its deployment with them.
      for (const chainId of new Set(gone.filter((t) => t.kind === "PAYOUT" || t.kind === "FEE").map((t) => t.chainId))) {
        const left = await tx.chainTransfer.count({ where: { chargeId, chainId, kind: { in: ["PAYOUT", "FEE"] }, status: "CONFIRMED" } });
        if (left > 0) continue;
        await tx.clone.updateMany({ where: { chargeId, chainId }, data: { deployedAt: null, flushFailures: 0, flushRetryAt: null } });
        await tx.charge.updateMany({ where: { id: chargeId, chainId }, data: { deployedAt: null } });
      }
      // The charge shows no payout the chain no longer has: the next one takes its place.
      await tx.charge.updateMany({ where: { id: chargeId, flushTxHash: { in: hashes } }, data: { flushTxHash: null } });
      const lines = gone.map((t) => `${t.kind.toLowerCase()} of ${t.amount.toFixed()} base units in ${t.txHash}`);
      const reopened = await reopenUnpaid(tx, chargeId, now);
      const { invoiceId } = await tx.charge.findUniqueOrThrow({ where: { id: chargeId }, select: { invoiceId: true } });
      const invoiceReopened = invoiceId ? await reopenReversedInvoice(tx, invoiceId, settings, now) : null;
      if (invoiceReopened) events.push(invoiceReopened);
      const reason = `${why}: ${lines.join("; ")} no longer on chain; reversed in the ledger${reopened ? REOPENED : ""}`;
      await flagForReview(tx, new Map([[chargeId, reason]]), settings, now);
      await recordEvents(tx, events);
      const charge = await tx.charge.findUniqueOrThrow({ where: { id: chargeId } });
      return { charge, reopened };
    });
    if (!done) continue;
    settings.feed?.changed([done.charge]);
    // Reopened past its time (by the clock its expiry goes by): it expires now, as any PENDING charge.
    const expired = done.reopened ? await expireDueCharges(prisma, settings, now, { limit: 1, only: chargeId }) : [];
    touched.push(expired[0] ?? done.charge);
  }
  return touched;
}

/** What a reopened charge's review reason adds. */
const REOPENED = "; nothing had been paid out and what is left does not pay it: PENDING again";

/**
 * Inside the reversal's transaction, the charge's row locked and its money derived again: a RECEIVED
 * charge whose payments are gone (what is left no longer pays it) and out of which nothing was paid
 * is PENDING again, as the state machine's `reopen` allows. True when it reopened.
 */
async function reopenUnpaid(tx: P.TransactionClient, chargeId: string, now: Date): Promise<boolean> {
  const [charge] = await tx.$queryRaw<Charge[]>`SELECT ${CHARGE_COLUMNS} FROM charges WHERE id = ${chargeId}`;
  if (!charge || charge.status !== "RECEIVED") return false;
  try {
    const status = nextStatus(charge, "reopen", now);
    await tx.charge.update({ where: { id: chargeId }, data: { status, updatedAt: now } });
    return true;
  } catch (e) {
    if (e instanceof ChargeTransitionError) return false;
    throw e;
  }
}
