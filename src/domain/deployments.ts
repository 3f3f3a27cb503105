// Clone deployments, the database side: the job each chain selection queues, claimed in batches
// for one relayer transaction (the factory's deployMany), and what its outcome does. The chain side
// (signing, sending, tracking) is jobs/deployments.ts and jobs/relayer-txs.ts.
//
// A job moves PENDING → SENT (in a batch transaction) → MINED (the clone has code; the charge's
// `deployedAt` is set). A batch that reverts or is never mined puts its jobs back to PENDING with a
// growing delay; deployMany skips clones that exist by then, so a job sent twice costs little and
// deploys nothing twice.
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";

/** A deployment waiting to be sent. */
export interface DueDeployment {
  chargeId: string;
  cloneAddress: string;
  /** The merchant's wallet and fee, the clone's immutable arguments (its address follows from them). */
  wallet: string;
  feeBps: number;
}

/** Up to `limit` deployments of `chainId` waiting to be sent, oldest first. */
export async function dueDeployments(prisma: Prisma, chainId: number, limit: number, now = new Date()): Promise<DueDeployment[]> {
  return prisma.$queryRaw`
    SELECT d.charge_id AS "chargeId", c.clone_address AS "cloneAddress", c.settlement_wallet AS wallet, c.fee_bps AS "feeBps"
    FROM clone_deployments d JOIN charges c ON c.id = d.charge_id
    WHERE d.chain_id = ${chainId} AND d.status = 'PENDING' AND d.next_attempt_at <= ${now}
    ORDER BY d.next_attempt_at, d.charge_id LIMIT ${limit}`;
}

/** Claims `chargeIds`' deployments for batch `txId` (inside its recording); false if one is no longer waiting. */
export async function claimDeployments(tx: P.TransactionClient, txId: string, chargeIds: string[]): Promise<boolean> {
  const claimed = await tx.cloneDeployment.updateMany({
    where: { chargeId: { in: chargeIds }, status: "PENDING" },
    data: { status: "SENT", txId, attempts: { increment: 1 }, lastError: null },
  });
  return claimed.count === chargeIds.length;
}

/** The batch `txId` was mined: its clones exist. Returns how many charges it deployed. */
export async function markDeployed(prisma: Prisma, txId: string, now = new Date()): Promise<number> {
  const [, charges] = await prisma.$transaction([
    prisma.cloneDeployment.updateMany({ where: { txId }, data: { status: "MINED", lastError: null } }),
    prisma.$executeRaw`
      UPDATE charges SET deployed_at = ${now} WHERE deployed_at IS NULL AND id IN (SELECT charge_id FROM clone_deployments WHERE tx_id = ${txId})`,
  ]);
  return charges;
}

/** The batch `txId` deployed nothing (reverted, or never mined): its jobs wait again, longer each time. */
export async function requeueDeployments(prisma: Prisma, txId: string, reason: string, now = new Date()): Promise<void> {
  // 5 s, 10 s, 20 s … up to 10 min after each attempt.
  await prisma.$executeRaw`
    UPDATE clone_deployments SET status = 'PENDING', tx_id = NULL, last_error = ${reason.slice(0, 500)}, updated_at = ${now},
      next_attempt_at = ${now}::timestamptz + make_interval(secs => least(600, 5 * power(2, least(attempts - 1, 7))))
    WHERE tx_id = ${txId} AND status = 'SENT'`;
}

/** A batch could not even be signed (the node refused to estimate it): its jobs are tried again later. */
export async function deferDeployments(prisma: Prisma, chargeIds: string[], reason: string, retryAt: Date): Promise<void> {
  await prisma.cloneDeployment.updateMany({
    where: { chargeId: { in: chargeIds }, status: "PENDING" },
    data: { lastError: reason.slice(0, 500), nextAttemptAt: retryAt },
  });
}

/** Queues again the deployments of charges whose clone the chain no longer has (a devnet restarted from older state). */
export async function requeueLostClones(prisma: Prisma, chargeIds: string[]): Promise<void> {
  if (chargeIds.length === 0) return;
  await prisma.cloneDeployment.updateMany({ where: { chargeId: { in: chargeIds } }, data: { status: "PENDING", txId: null, nextAttemptAt: new Date() } });
}
