// Relays the EIP-3009 authorizations merchants signed for refunds (domain/refund-authorizations.ts):
// in the process that holds the chain's relayer, each stored authorization is simulated again and,
// if the token would take it, sent as a relayer transaction of kind AUTHORIZATION (stored before it
// is broadcast, fee bumps and nonce order as for every other). The refund completes when the indexer
// sees the transfer. One that would revert, or whose transaction fails, keeps why and frees the
// refund for another authorization.
import type { Logger } from "pino";
import { transferWithAuthorizationCall } from "../chain/authorizations.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { storedAuthorization } from "../domain/authorizations.js";
import { sendRelayerTx } from "./relayer-txs.js";

/** Sends the authorizations stored for refunds on the relayer's chain. */
export async function runRefundAuthorizations(prisma: Prisma, relayer: Relayer, logger: Logger): Promise<void> {
  const waiting = await prisma.refund.findMany({
    where: {
      chainId: relayer.chain.chainId,
      status: "AWAITING_PAYMENT",
      txHash: null,
      authorizationTxId: null,
      authorizationError: null,
      NOT: { authorization: { equals: P.DbNull } },
    },
    select: { id: true, authorization: true },
  });
  for (const refund of waiting) {
    const call = transferWithAuthorizationCall(relayer.chain.usdc, storedAuthorization(refund.authorization));
    // The relayer never pays for a transaction that would revert (expired or used meanwhile).
    const refusal = await relayer.provider.call({ ...call, from: relayer.address }).then(
      () => null,
      (e: Error & { shortMessage?: string }) => e.shortMessage ?? e.message,
    );
    if (refusal) {
      await prisma.refund.updateMany({
        where: { id: refund.id, authorizationTxId: null },
        data: { authorizationError: `the token refuses it now: ${refusal}` },
      });
      logger.warn({ refundId: refund.id, refusal }, "refund authorization not relayed");
      continue;
    }
    const sent = await sendRelayerTx(prisma, relayer, "AUTHORIZATION", call, async (tx, txId) => {
      const { count } = await tx.refund.updateMany({
        where: { id: refund.id, authorizationTxId: null, authorizationError: null },
        data: { authorizationTxId: txId },
      });
      return count === 1;
    });
    if (sent) logger.info({ refundId: refund.id, relayerTx: sent }, "refund authorization relayed");
  }
}
