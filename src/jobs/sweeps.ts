// Sends the sweeps asked for (domain/sweeps.ts) on the relayer's chain: ChargeFactoryV2's `payout` of
// the token (or `payoutNative`) for the charge's clone, deploying it first if it has no code (money
// sent before anyone paid it out); a version 1 clone's own flush of the token. Each is simulated first:
// nothing to sweep, or a token that refuses, fails the sweep without spending gas.
import { id, Interface, isError, type TransactionReceipt, zeroPadValue } from "ethers";
import type { Logger } from "pino";
import { ChargeCloneV1Artifact, ChargeFactoryV1Artifact, ChargeFactoryV2Artifact } from "../chain/artifacts.js";
import { chargeKey, payoutWords } from "../chain/clones.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import { markDeployed } from "../domain/payouts.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

const factoryV2 = new Interface(ChargeFactoryV2Artifact.abi);
const factoryV1 = new Interface(ChargeFactoryV1Artifact.abi);
const cloneV1 = new Interface(ChargeCloneV1Artifact.abi);
const FAILED = 2n ** 256n - 1n;
const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");

/** Sends the sweeps waiting on the relayer's chain. */
export async function runSweeps(prisma: Prisma, relayer: Relayer, logger: Logger): Promise<void> {
  const waiting = await prisma.sweep.findMany({
    where: { chainId: relayer.chain.chainId, status: "PENDING" },
    include: { charge: { select: { depositAddress: true, settlementWallet: true, feeBps: true, contractVersion: true } } },
    orderBy: { createdAt: "asc" },
  });
  for (const { charge, ...sweep } of waiting) {
    const fail = (error: string) => prisma.sweep.updateMany({ where: { id: sweep.id, status: "PENDING" }, data: { status: "FAILED", error } });
    const address = charge.depositAddress!;
    const deployed = (await relayer.provider.getCode(address)) !== "0x";
    const call = sweepCall(relayer, sweep.chargeId, sweep.token, { ...charge, address, deployed });
    let paid: bigint;
    try {
      paid = decodePaid(charge.contractVersion, sweep.token, deployed, await relayer.provider.call({ ...call, from: relayer.address }));
    } catch (e) {
      // Transport trouble is no verdict on the token: the round fails and the sweep is tried again.
      if (!isError(e, "CALL_EXCEPTION") && !isError(e, "BAD_DATA")) throw e;
      paid = FAILED;
      logger.warn({ sweep: sweep.id, err: (e as Error).message }, "sweep would fail");
    }
    if (paid === 0n) {
      await fail(`nothing to sweep: the address holds none of ${sweep.token}`);
      continue;
    }
    if (paid === FAILED) {
      await fail("the token refuses the transfer (or the merchant's wallet refuses the native coin)");
      continue;
    }
    const sent = await sendRelayerTx(prisma, relayer, "SWEEP", call, async (tx, txId) => {
      const { count } = await tx.sweep.updateMany({ where: { id: sweep.id, status: "PENDING" }, data: { status: "SENT", txId } });
      return count === 1;
    });
    if (sent) logger.info({ sweep: sweep.id, chargeId: sweep.chargeId, token: sweep.token, relayerTx: sent }, "sweep sent");
  }
}

interface SweptClone {
  address: string;
  deployed: boolean;
  settlementWallet: string;
  feeBps: number;
  contractVersion: number;
}

/** The call that pays `token` out of the clone of `chargeId`. */
function sweepCall(relayer: Relayer, chargeId: string, token: string, c: SweptClone): { to: string; data: string } {
  if (c.contractVersion === 2) {
    const words = payoutWords({ chargeId, wallet: c.settlementWallet, feeBps: c.feeBps, amount: 0n, deployed: c.deployed });
    const data = token === "native" ? factoryV2.encodeFunctionData("payoutNative", [words]) : factoryV2.encodeFunctionData("payout", [token, words]);
    return { to: relayer.chain.factory, data };
  }
  if (c.deployed) return { to: c.address, data: cloneV1.encodeFunctionData("flush", [token]) };
  return { to: relayer.chain.v1!.factory, data: factoryV1.encodeFunctionData("deployAndFlush", [chargeKey(chargeId), c.settlementWallet, c.feeBps, token]) };
}

/**
 * Whether the clone at `address` gave up `token` in the mined `receipt`: a Transfer out of it, or for
 * the native coin (which logs nothing) an empty balance at that block.
 */
async function sweptAnything(relayer: Pick<Relayer, "provider">, token: string, address: string, receipt: TransactionReceipt): Promise<boolean> {
  if (token === "native") return (await relayer.provider.getBalance(address, receipt.blockNumber)) === 0n;
  const from = zeroPadValue(address, 32).toLowerCase();
  return receipt.logs.some((l) => l.address.toLowerCase() === token.toLowerCase() && l.topics[0] === TRANSFER_TOPIC && l.topics[1]?.toLowerCase() === from);
}

/** What a simulated sweep would move (net + fee), or FAILED. */
function decodePaid(version: number, token: string, deployed: boolean, out: string): bigint {
  if (version === 2) return (factoryV2.decodeFunctionResult(token === "native" ? "payoutNative" : "payout", out)[0] as bigint[])[0]!;
  const r = deployed ? cloneV1.decodeFunctionResult("flush", out) : factoryV1.decodeFunctionResult("deployAndFlush", out).slice(1);
  return (r[0] as bigint) + (r[1] as bigint);
}

/**
 * What a SWEEP relayer transaction's end does to its sweep. Mined, it is DONE if the clone gave up the
 * token (ChargeFactoryV2 reports a clone it could not pay without reverting); confirmed, the clone is
 * known to have code, so no payout creates it again.
 */
export function sweepHandlers(prisma: Prisma, relayer: Pick<Relayer, "provider" | "chain">, now: () => Date): TxHandlers {
  return {
    async mined(tx, receipt) {
      const sweep = await prisma.sweep.findFirst({ where: { txId: tx.id }, include: { charge: { select: { depositAddress: true } } } });
      if (!sweep) return;
      const moved = await sweptAnything(relayer, sweep.token, sweep.charge.depositAddress!, receipt);
      await prisma.sweep.updateMany({
        where: { txId: tx.id },
        data: moved ? { status: "DONE", error: null } : { status: "FAILED", error: "nothing moved: the token refused the transfer when it was mined" },
      });
    },
    async confirmed(tx) {
      const sweep = await prisma.sweep.findFirst({ where: { txId: tx.id, status: "DONE" } });
      if (sweep) await markDeployed(prisma, sweep.chainId, sweep.chargeId, now());
    },
    async failed(tx, receipt) {
      await prisma.sweep.updateMany({
        where: { txId: tx.id },
        data: { status: "FAILED", error: receipt ? "its transaction reverted" : "its transaction was dropped" },
      });
    },
  };
}
