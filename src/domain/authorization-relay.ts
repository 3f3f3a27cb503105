// An accepted authorization's way through the relayer: RELAYING → SENT → MINED, or FAILED with why.
// The worker (jobs/authorizations.ts) only loops, simulates and sends; every change of state is one
// of these functions. What an authorization pays (a charge, a refund) is each kind's own rule here:
// when it still waits for the money, and how it is held while the relayer transaction is stored.
import type { Prisma } from "../db/client.js";
import type { Authorization, AuthorizationPurpose, Prisma as P } from "../generated/prisma/client.js";

type Db = Prisma | P.TransactionClient;

/** An authorization waiting for the relayer, with what it pays. */
export type WaitingAuthorization = Authorization & {
  charge: { status: string };
  refund: { status: string; txHash: string | null } | null;
};

/** How one kind of authorization's payee is asked and held. */
interface PayeeRule {
  /** Why what it pays no longer waits for the money, or null while it does. */
  gone(a: WaitingAuthorization): string | null;
  /** Holds what it pays until the transaction commits (a cancel, an expiry or another payment waits); false when it no longer waits. */
  hold(tx: P.TransactionClient, a: Authorization): Promise<boolean>;
}

const PAYEES: Record<AuthorizationPurpose, PayeeRule> = {
  PAYMENT: {
    gone: ({ charge }) => (charge.status === "PENDING" ? null : `the charge is ${charge.status} and takes no payment`),
    async hold(tx, a) {
      const still = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM charges WHERE id = ${a.chargeId} AND status = 'PENDING' FOR SHARE`;
      return still.length === 1;
    },
  },
  REFUND: {
    gone: ({ refund }) =>
      refund?.status === "AWAITING_PAYMENT" && refund.txHash === null ? null : `the refund is ${refund?.status ?? "gone"} and waits for no payment`,
    async hold(tx, a) {
      const still = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM refunds WHERE id = ${a.refundId} AND status = 'AWAITING_PAYMENT' AND tx_hash IS NULL FOR SHARE`;
      return still.length === 1;
    },
  },
};

/** The accepted authorizations on `chainId` the relayer has not sent yet, oldest first. */
export function waitingAuthorizations(prisma: Prisma, chainId: number): Promise<WaitingAuthorization[]> {
  return prisma.authorization.findMany({
    where: { chainId, status: "RELAYING" },
    include: { charge: { select: { status: true } }, refund: { select: { status: true, txHash: true } } },
    orderBy: { createdAt: "asc" },
  });
}

/** Why what `a` pays no longer waits for it (the signer's money then stays with the signer), or null. */
export function payeeGone(a: WaitingAuthorization): string | null {
  return PAYEES[a.purpose].gone(a);
}

/** A waiting authorization that will not be sent: FAILED, keeping why. */
export async function markFailed(db: Db, id: string, error: string): Promise<void> {
  await db.authorization.updateMany({ where: { id, status: "RELAYING" }, data: { status: "FAILED", error } });
}

/**
 * In the database transaction that stores relayer transaction `txId`: the authorization is SENT in it
 * while what it pays still waits (held until commit). False when it no longer waits or was taken.
 */
export async function markSent(tx: P.TransactionClient, a: Authorization, txId: string): Promise<boolean> {
  if (!(await PAYEES[a.purpose].hold(tx, a))) return false;
  const { count } = await tx.authorization.updateMany({ where: { id: a.id, status: "RELAYING" }, data: { status: "SENT", txId } });
  return count === 1;
}

/** Relayer transaction `txId` succeeded: its authorization is MINED, its real gas replacing the simulated one in the day's budget. */
export async function markMined(db: Db, txId: string, gasUsed: bigint): Promise<void> {
  await db.authorization.updateMany({ where: { txId }, data: { status: "MINED", gasUsed, error: null } });
}

/** Relayer transaction `txId` reverted (with its gas) or was dropped (`gasUsed` null): its authorization is FAILED with why. */
export async function markRelayFailed(db: Db, txId: string, error: string, gasUsed: bigint | null): Promise<void> {
  await db.authorization.updateMany({ where: { txId }, data: { status: "FAILED", error, ...(gasUsed !== null && { gasUsed }) } });
}
