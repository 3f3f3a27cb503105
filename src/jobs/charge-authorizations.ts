// Relays buyers' gasless payments (domain/charge-authorizations.ts): in the process that holds the
// chain's relayer, each accepted authorization is simulated again and, if the token would take it,
// sent as a relayer transaction of kind AUTHORIZATION (stored before it is broadcast, fee bumps and
// nonce order as for every other). The payment then arrives like any transfer to the clone.
import type { Logger } from "pino";
import { transferWithAuthorizationCall } from "../chain/authorizations.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import { transferOf } from "../domain/charge-authorizations.js";
import { sendRelayerTx } from "./relayer-txs.js";

/** Sends the accepted gasless payments on the relayer's chain, oldest first. */
export async function runChargeAuthorizations(prisma: Prisma, relayer: Relayer, logger: Logger): Promise<void> {
  const waiting = await prisma.chargeAuthorization.findMany({
    where: { chainId: relayer.chain.chainId, status: "RELAYING" },
    include: { charge: { select: { cloneAddress: true, status: true } } },
    orderBy: { createdAt: "asc" },
  });
  for (const { charge, ...authorization } of waiting) {
    // Expired or cancelled meanwhile: the buyer's money stays with the buyer.
    if (charge.status !== "PENDING") {
      await prisma.chargeAuthorization.updateMany({
        where: { id: authorization.id, status: "RELAYING" },
        data: { status: "FAILED", error: `the charge is ${charge.status} and takes no payment` },
      });
      continue;
    }
    const call = transferWithAuthorizationCall(relayer.chain.usdc, transferOf(authorization, charge.cloneAddress!));
    // The relayer never pays for a transaction that would revert (expired, or the nonce used meanwhile).
    const refusal = await relayer.provider.call({ ...call, from: relayer.address }).then(
      () => null,
      (e: Error & { shortMessage?: string }) => e.shortMessage ?? e.message,
    );
    if (refusal) {
      await prisma.chargeAuthorization.updateMany({
        where: { id: authorization.id, status: "RELAYING" },
        data: { status: "FAILED", error: `the token refuses it now: ${refusal}` },
      });
      logger.warn({ chargeId: authorization.chargeId, refusal }, "gasless payment not relayed");
      continue;
    }
    const sent = await sendRelayerTx(prisma, relayer, "AUTHORIZATION", call, async (tx, txId) => {
      // Cancelled or expired since it was read: held until this commits, then nothing is sent (the next tick marks it failed).
      const [still] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM charges WHERE id = ${authorization.chargeId} AND status = 'PENDING' FOR SHARE`;
      if (!still) return false;
      const { count } = await tx.chargeAuthorization.updateMany({ where: { id: authorization.id, status: "RELAYING" }, data: { status: "SENT", txId } });
      return count === 1;
    });
    if (sent) logger.info({ chargeId: authorization.chargeId, relayerTx: sent }, "gasless payment relayed");
  }
}
