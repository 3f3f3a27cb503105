// What a reorg deeper than the confirmations does to money (.docs/ledger.md): the indexer finds the
// confirmed transfers above the fork and asks the node's receipts which still exist. One the chain
// re-included (perhaps at another log index, in another block) is the same transfer: only its position
// changes. One the chain no longer has is REVERSED: a reversal row undoes its ledger row, the money
// fields are derived again, and its charge needs review:
//
//   payment gone   amountReceived falls (a completed charge stays completed: someone must look)
//   payout gone    the money is back in the clone: it is due again, and the clone, whose deployment went
//                  with it, is deployed again by that payout (which the charge then shows as its flush)
//   refund gone    the refund waits for its payment again
//   any            the authorizations its transaction used are money on its way again until they expire
//
// A transfer reversed and later re-included is seen anew and confirmed anew: a new ledger row, counted
// as the reversed one was (domain/payments.ts), so a restored payment is neither late nor new money.
import type { Prisma } from "../db/client.js";
import type { ChangeSettings, Charge } from "./charges.js";
import { type NewEvent, recordEvents } from "./events.js";
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

/** Moves confirmed transfers the chain re-included to where they are now (they stay confirmed, counted once). */
export async function relocateTransfers(prisma: Prisma, moved: readonly Relocation[]): Promise<void> {
  for (const m of moved) {
    await prisma.chainTransfer.updateMany({
      where: { id: m.id, status: "CONFIRMED" },
      data: { blockNumber: m.blockNumber, blockHash: m.blockHash, logIndex: m.logIndex },
    });
  }
}

/**
 * Reverses the confirmed transfers `ids` that the chain no longer has (see the top of this file),
 * one charge per transaction; `why` says what happened, for the review. Returns the charges touched.
 */
export async function reverseTransfers(
  prisma: Prisma,
  settings: ChangeSettings & { paymentBaseUrl: string },
  ids: readonly string[],
  why: string,
  now = new Date(),
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
          events.push({ scope: refund, type: "refund.updated", data: refundResource(refund, settings) });
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
      const flagged = await flagForReview(tx, new Map([[chargeId, `${why}: ${lines.join("; ")} no longer on chain; reversed in the ledger`]]), settings, now);
      const recorded = await recordEvents(tx, events);
      const charge = await tx.charge.findUniqueOrThrow({ where: { id: chargeId } });
      return { charge, events: [...flagged.events, ...recorded] };
    });
    if (!done) continue;
    settings.feed?.changed([done.charge], done.events);
    touched.push(done.charge);
  }
  return touched;
}
