// An x402 payment's way through the relayer: RELAYING → SENT → SETTLED, or FAILED with why. The worker
// (jobs/authorizations.ts) simulates and sends it as a relayer transaction of kind AUTHORIZATION, as
// it does the other authorizations; every change of an x402 payment's state is one of these.
import type { Prisma } from "../../db/client.js";
import type { Prisma as P, X402Payment } from "../../generated/prisma/client.js";

type Db = Prisma | P.TransactionClient;

/** The x402 payments on `chainId` the relayer has not sent yet, oldest first. */
export function waitingX402Payments(prisma: Prisma, chainId: number): Promise<X402Payment[]> {
  return prisma.x402Payment.findMany({ where: { chainId, status: "RELAYING" }, orderBy: { createdAt: "asc" } });
}

/** A waiting payment that will not be sent: FAILED, keeping why. */
export async function markX402Failed(db: Db, id: string, error: string): Promise<void> {
  await db.x402Payment.updateMany({ where: { id, status: "RELAYING" }, data: { status: "FAILED", error } });
}

/**
 * In the database transaction that stores relayer transaction `txId`: the payment is SENT in it. False
 * when it was no longer waiting (settle's answer gave up on it first).
 */
export async function markX402Sent(tx: P.TransactionClient, id: string, txId: string): Promise<boolean> {
  const { count } = await tx.x402Payment.updateMany({ where: { id, status: "RELAYING" }, data: { status: "SENT", txId } });
  return count === 1;
}

/** Relayer transaction `txId` (hash `txHash`) succeeded: its payment is SETTLED, its real gas replacing the simulated one in the day's budget. */
export async function markX402Settled(db: Db, txId: string, txHash: string, gasUsed: bigint): Promise<void> {
  await db.x402Payment.updateMany({ where: { txId }, data: { status: "SETTLED", txHash, gasUsed, error: null } });
}

/** Relayer transaction `txId` reverted (with its gas) or was dropped (`gasUsed` null): its payment is FAILED with why. */
export async function markX402RelayFailed(db: Db, txId: string, error: string, gasUsed: bigint | null): Promise<void> {
  await db.x402Payment.updateMany({ where: { txId }, data: { status: "FAILED", error, txHash: null, ...(gasUsed !== null && { gasUsed }) } });
}
