// Deploys the clones of charges whose chain was picked, in batches: up to BATCH clones per relayer
// transaction (the factory's deployMany), so a burst of selections costs a few transactions and a
// few RPC calls rather than one transaction (and its calls) each. The batch is tracked like every
// relayer transaction (jobs/relayer-txs.ts); its jobs are marked deployed when it is mined.
//
// Nothing is asked of the chain before sending: deployMany skips a clone that already exists (sent
// before a crash, or deployed by anyone), so a repeat costs a little gas and deploys nothing twice.
import { Interface } from "ethers";
import type { Logger } from "pino";
import { ChargeFactoryArtifact } from "../chain/artifacts.js";
import { cloneSalt } from "../chain/clones.js";
import type { EnabledChain } from "../chain/chains.js";
import { ChainRpc, isTransientRpcError } from "../chain/rpc.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import { claimDeployments, deferDeployments, dueDeployments, markDeployed, requeueDeployments, requeueLostClones } from "../domain/deployments.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

const factoryAbi = new Interface(ChargeFactoryArtifact.abi);
/** Clones per deployMany transaction: about 3 M gas, well inside every registry chain's block. */
export const DEPLOY_BATCH = 50;
/** Batches sent per round at most (a burst of selections goes out together). */
const MAX_BATCHES = 20;

/** Sends the waiting deployments of `relayer`'s chain in batches; returns how many were sent. */
export async function runDeployments(prisma: Prisma, relayer: Relayer, logger: Logger, now = new Date()): Promise<number> {
  const chainId = relayer.chain.chainId;
  let sent = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const due = await dueDeployments(prisma, chainId, DEPLOY_BATCH, now);
    if (due.length === 0) break;
    const ids = due.map((d) => d.chargeId);
    const data = factoryAbi.encodeFunctionData("deployMany", [ids.map(cloneSalt), due.map((d) => d.wallet), due.map((d) => d.feeBps)]);
    try {
      const txId = await sendRelayerTx(prisma, relayer, "DEPLOY", { to: relayer.chain.factory, data }, (tx, id) => claimDeployments(tx, id, ids));
      if (txId) logger.info({ tx: txId, clones: due.length }, "clone deployments sent");
    } catch (e) {
      const message = (e as Error).message.slice(0, 500);
      logger.warn({ chainId, clones: due.length, err: message }, "clone deployment batch could not be sent");
      // A flaky node is tried again soon; anything else (the node will not estimate it) backs off.
      await deferDeployments(prisma, ids, message, new Date(now.getTime() + (isTransientRpcError(e) ? 1_000 : 30_000)));
      break;
    }
    sent += due.length;
    if (due.length < DEPLOY_BATCH) break;
  }
  return sent;
}

/** What the outcome of a deployment batch does to its jobs. */
export function deploymentHandlers(prisma: Prisma, logger: Logger): TxHandlers {
  return {
    async mined(tx) {
      const deployed = await markDeployed(prisma, tx.id);
      logger.info({ tx: tx.id, hash: tx.txHash, charges: deployed }, "clones deployed");
    },
    async confirmed() {},
    async failed(tx, receipt) {
      await requeueDeployments(prisma, tx.id, receipt ? `batch ${receipt.hash} reverted` : "batch never mined (its nonce went to another transaction)");
    },
  };
}

/**
 * Queues again the mined deployments whose clone `chain` no longer has: a devnet restarted from
 * state saved just before they were mined. Returns how many.
 */
export async function requeueVanishedClones(prisma: Prisma, chain: EnabledChain): Promise<number> {
  const mined = await prisma.cloneDeployment.findMany({
    where: { chainId: chain.chainId, status: "MINED" },
    include: { charge: { select: { cloneAddress: true } } },
  });
  const rpc = new ChainRpc(chain.chainId, chain.rpcUrls);
  try {
    const missing: string[] = [];
    for (const d of mined) if (d.charge.cloneAddress && (await rpc.getCode(d.charge.cloneAddress)) === "0x") missing.push(d.chargeId);
    await requeueLostClones(prisma, missing);
    return missing.length;
  } finally {
    rpc.destroy();
  }
}
