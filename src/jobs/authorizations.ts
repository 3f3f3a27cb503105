// What a relayed EIP-3009 authorization's transaction does when it ends, whoever signed it: a refund's
// (the merchant's wallet) or a buyer's gasless payment. The money itself shows as a transfer the
// indexer sees; these keep the authorization's own state and the gas it cost.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { TxHandlers } from "./relayer-txs.js";

/** Handlers of AUTHORIZATION relayer transactions. */
export function authorizationHandlers(prisma: Prisma, logger: Logger): TxHandlers {
  return {
    async mined(tx, receipt) {
      // The real gas replaces the simulated one in the chain's daily budget.
      await prisma.chargeAuthorization.updateMany({ where: { txId: tx.id }, data: { status: "MINED", gasUsed: receipt.gasUsed, error: null } });
    },
    async confirmed() {},
    async failed(tx, receipt) {
      const why = receipt ? "its transaction reverted" : "its transaction was dropped";
      await prisma.refund.updateMany({ where: { authorizationTxId: tx.id }, data: { authorizationError: why } });
      await prisma.chargeAuthorization.updateMany({
        where: { txId: tx.id },
        data: { status: "FAILED", error: why, ...(receipt && { gasUsed: receipt.gasUsed }) },
      });
      logger.warn({ relayerTx: tx.id, why }, "relayed authorization failed");
    },
  };
}
