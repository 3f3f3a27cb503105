// Relays the EIP-3009 authorizations the service accepted (domain/authorizations.ts): buyers' payments
// without gas and refunds the settlement wallet signed. In the process that holds the chain's relayer,
// each one waiting is simulated again and, if the token would take it and what it pays still waits for
// it, sent as a relayer transaction of kind AUTHORIZATION (stored before it is broadcast, fee bumps and
// nonce order as for every other). The money then shows as a transfer the indexer reads. A relay that
// fails keeps why; the authorization stays money on its way until the chain spends its nonce or its
// validBefore passes, whoever sends it.
import type { Logger } from "pino";
import { transferWithAuthorizationCall } from "../chain/authorizations.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import { transferOf } from "../domain/authorizations.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

/** Sends the accepted authorizations waiting on the relayer's chain, oldest first. */
export async function runAuthorizations(prisma: Prisma, relayer: Relayer, logger: Logger): Promise<void> {
  const waiting = await prisma.authorization.findMany({
    where: { chainId: relayer.chain.chainId, status: "RELAYING" },
    include: { charge: { select: { status: true } }, refund: { select: { status: true, txHash: true } } },
    orderBy: { createdAt: "asc" },
  });
  for (const { charge, refund, ...authorization } of waiting) {
    const fail = (error: string) => prisma.authorization.updateMany({ where: { id: authorization.id, status: "RELAYING" }, data: { status: "FAILED", error } });
    // What it pays no longer waits for it: the signer's money stays with the signer.
    if (authorization.purpose === "PAYMENT" && charge.status !== "PENDING") {
      await fail(`the charge is ${charge.status} and takes no payment`);
      continue;
    }
    if (authorization.purpose === "REFUND" && (refund?.status !== "AWAITING_PAYMENT" || refund.txHash !== null)) {
      await fail(`the refund is ${refund?.status ?? "gone"} and waits for no payment`);
      continue;
    }
    const call = transferWithAuthorizationCall(relayer.chain.usdc, transferOf(authorization));
    // The relayer never pays for a transaction that would revert (expired, or the nonce used meanwhile).
    const refusal = await relayer.provider.call({ ...call, from: relayer.address }).then(
      () => null,
      (e: Error & { shortMessage?: string }) => e.shortMessage ?? e.message,
    );
    if (refusal) {
      await fail(`the token refuses it now: ${refusal}`);
      logger.warn({ authorization: authorization.id, purpose: authorization.purpose, refusal }, "authorization not relayed");
      continue;
    }
    const sent = await sendRelayerTx(prisma, relayer, "AUTHORIZATION", call, async (tx, txId) => {
      // What it pays is held until this commits: a cancel, an expiry or another payment waits for it.
      const still =
        authorization.purpose === "PAYMENT"
          ? await tx.$queryRaw<{ id: string }[]>`SELECT id FROM charges WHERE id = ${authorization.chargeId} AND status = 'PENDING' FOR SHARE`
          : await tx.$queryRaw<{ id: string }[]>`
              SELECT id FROM refunds WHERE id = ${authorization.refundId} AND status = 'AWAITING_PAYMENT' AND tx_hash IS NULL FOR SHARE`;
      if (still.length === 0) return false;
      const { count } = await tx.authorization.updateMany({ where: { id: authorization.id, status: "RELAYING" }, data: { status: "SENT", txId } });
      return count === 1;
    });
    if (sent) logger.info({ authorization: authorization.id, purpose: authorization.purpose, relayerTx: sent }, "authorization relayed");
  }
}

/** What an AUTHORIZATION relayer transaction's end does to the authorization it carries (and the day's gas). */
export function authorizationHandlers(prisma: Prisma, logger: Logger): TxHandlers {
  return {
    async mined(tx, receipt) {
      // The real gas replaces the simulated one in the chain's daily budget.
      await prisma.authorization.updateMany({ where: { txId: tx.id }, data: { status: "MINED", gasUsed: receipt.gasUsed, error: null } });
    },
    async confirmed() {},
    async failed(tx, receipt) {
      const why = receipt ? "its transaction reverted" : "its transaction was dropped";
      await prisma.authorization.updateMany({
        where: { txId: tx.id },
        data: { status: "FAILED", error: why, ...(receipt && { gasUsed: receipt.gasUsed }) },
      });
      logger.warn({ relayerTx: tx.id, why }, "relayed authorization failed; it stays money on its way until the chain spends it or it expires");
    },
  };
}
