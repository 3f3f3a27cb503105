// Sends the sweeps asked for (domain/sweeps.ts) on the relayer's chain: ChargeFactoryV2's `payout` of
// the token (or `payoutNative`) for the charge's clone, deploying it first if it has no code (money
// sent before anyone paid it out); a version 1 clone's own flush of the token. Each is simulated first:
// nothing to sweep, or a token that refuses, fails the sweep without spending gas.
//
// Invariants:
// - a sweep is sent with the gas that gives the same outcome as a simulation with the block's whole
//   gas, plus headroom: the factory catches a clone that runs out of gas (it reports it FAILED rather
//   than revert the batch), so the node's estimate (the least gas that does not revert) can be too
//   little to move anything; the estimate is checked by a simulation at that gas, doubled until the
//   outcome is the same, and a token that needs more than a block can carry is never sent;
// - nothing is sent past the merchant's relayer gas for the day (domain/relayer-budget.ts), checked
//   under the chain's budget lock in the transaction that claims the sweep; a merchant with less than
//   SWEEP_MIN_GAS left has its sweeps refused before anything is simulated;
// - a round takes at most SWEEPS_PER_ROUND sweeps, oldest first: the chain's runner has indexing,
//   confirmations and payouts to do too;
// - a sweep that moves nothing keeps the clone's balance of the token, and the same sweep is refused
//   until that balance changes (domain/sweeps.ts).
import { id, Interface, isError, type TransactionReceipt, zeroPadValue } from "ethers";
import type { Logger } from "pino";
import { ChargeCloneV1Artifact, ChargeFactoryV1Artifact, ChargeFactoryV2Artifact } from "../chain/artifacts.js";
import { chargeKey, payoutWords } from "../chain/clones.js";
import { holding } from "../chain/holdings.js";
import { gasWithHeadroom, type Relayer } from "../chain/relayer.js";
import { withRpcRetry } from "../chain/rpc.js";
import type { Prisma } from "../db/client.js";
import { markDeployed } from "../domain/payouts.js";
import { countRelayerRefusal, fitsRelayerBudget, withinRelayerBudget } from "../domain/relayer-budget.js";
import { announceSweepChange, claimSweep, endSweep, failSweep, SWEEP_MIN_GAS, type SweepSettings } from "../domain/sweeps.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

const factoryV2 = new Interface(ChargeFactoryV2Artifact.abi);
const factoryV1 = new Interface(ChargeFactoryV1Artifact.abi);
const cloneV1 = new Interface(ChargeCloneV1Artifact.abi);
const FAILED = 2n ** 256n - 1n;
const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");

/** The most sweeps one round of the chain's runner takes on (the rest wait for the next rounds). */
export const SWEEPS_PER_ROUND = 20;

type Call = { to: string; data: string };
type Sim = Pick<Relayer, "provider" | "address">;

/**
 * Sends the sweeps waiting on the relayer's chain (`relayerGasBudget`: RELAYER_GAS_BUDGET_PER_MERCHANT,
 * the default where unset), announcing each one's change on `feed`.
 */
export async function runSweeps(
  prisma: Prisma,
  relayer: Relayer,
  logger: Logger,
  options: SweepSettings & { relayerGasBudget?: bigint | undefined } = {},
): Promise<void> {
  const waiting = await prisma.sweep.findMany({
    where: { chainId: relayer.chain.chainId, status: "PENDING" },
    include: { charge: { select: { merchantId: true, depositAddress: true, settlementWallet: true, feeBps: true, contractVersion: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: SWEEPS_PER_ROUND,
  });
  for (const { charge, ...sweep } of waiting) {
    const address = charge.depositAddress!;
    const fail = (error: string, seen: bigint | null = null) => failSweep(prisma, options, sweep.id, error, seen);
    const budget = { merchantId: charge.merchantId, chainId: sweep.chainId, kind: "sweep" as const, budget: options.relayerGasBudget };
    const overBudget = (gas: string) =>
      fail(`the merchant's relayer gas for today (RELAYER_GAS_BUDGET_PER_MERCHANT) cannot pay the ${gas} it needs; ask again tomorrow (UTC)`);
    // Nothing is simulated for a merchant whose day is spent: that costs the chain's round, not the merchant.
    if (!(await fitsRelayerBudget(prisma, budget, SWEEP_MIN_GAS))) {
      await overBudget(`${SWEEP_MIN_GAS} gas (at least)`);
      continue;
    }
    const deployed = (await relayer.provider.getCode(address)) !== "0x";
    const call = sweepCall(relayer, sweep.chargeId, sweep.token, { ...charge, address, deployed });
    const blockGas = (await withRpcRetry(() => relayer.provider.getBlock("latest")))!.gasLimit;
    const full = await outcome(relayer, call, blockGas);
    const paid = full === null ? FAILED : decodePaid(charge.contractVersion, sweep.token, deployed, full);
    if (full === null) logger.warn({ sweep: sweep.id }, "sweep would fail");
    if (paid === 0n) {
      await fail(`nothing to sweep: the address holds none of ${sweep.token}`);
      continue;
    }
    if (paid === FAILED) {
      await fail("the token refuses the transfer (or the merchant's wallet refuses the native coin)", await holding(relayer.provider, sweep.token, address));
      continue;
    }
    const gasNeeded = await gasForOutcome(relayer, call, full!, blockGas);
    if (gasNeeded === null) {
      await fail(
        `the token needs more gas to move than a transaction can carry on chain ${relayer.chain.chainId}`,
        await holding(relayer.provider, sweep.token, address),
      );
      continue;
    }
    let refused = false;
    const sent = await sendRelayerTx(
      prisma,
      relayer,
      "SWEEP",
      call,
      async (tx, txId) => {
        // Checked and claimed under the chain's budget lock, as a payment without gas is.
        refused = !(await withinRelayerBudget(tx, budget, gasNeeded));
        if (refused) return false;
        return claimSweep(tx, sweep.id, txId, gasNeeded);
      },
      { gasNeeded },
    );
    if (refused) {
      await countRelayerRefusal(prisma, budget);
      await overBudget(`${gasNeeded} gas`);
    }
    if (sent) {
      await announceSweepChange(prisma, options, sweep.chargeId);
      logger.info({ sweep: sweep.id, chargeId: sweep.chargeId, token: sweep.token, gasNeeded, relayerTx: sent }, "sweep sent");
    }
  }
}

/**
 * What `call` returns with `gas` (the block's whole gas when asked for the outcome), or null when it
 * reverts. Transport trouble is no verdict on the token: it throws, the round fails and the sweep is
 * tried again.
 */
async function outcome(relayer: Sim, call: Call, gas: bigint): Promise<string | null> {
  try {
    return await relayer.provider.call({ ...call, from: relayer.address, gasLimit: gas });
  } catch (e) {
    if (!isError(e, "CALL_EXCEPTION") && !isError(e, "BAD_DATA")) throw e;
    return null;
  }
}

/**
 * The least gas, from the node's estimate and doubling, with which `call` returns `expected` (its
 * outcome with the block's gas), so that the gas limit (this plus headroom) still fits a block; null
 * when no such gas does.
 */
export async function gasForOutcome(relayer: Sim, call: Call, expected: string, blockGas: bigint): Promise<bigint | null> {
  // The most whose headroom still fits in a block (gasWithHeadroom is monotonic).
  const cap = ((blockGas - 30_000n) * 4n) / 5n;
  let gas = await relayer.provider.estimateGas({ ...call, from: relayer.address }).catch((e: unknown) => {
    if (!isError(e, "CALL_EXCEPTION")) throw e;
    return cap;
  });
  for (;;) {
    if (gas > cap) gas = cap;
    if ((await outcome(relayer, call, gas)) === expected) return gasWithHeadroom(gas) <= blockGas ? gas : null;
    if (gas === cap) return null;
    gas *= 2n;
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
function sweepCall(relayer: Relayer, chargeId: string, token: string, c: SweptClone): Call {
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
  if (token === "native") return (await holding(relayer.provider, "native", address, receipt.blockNumber)) === 0n;
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
export function sweepHandlers(prisma: Prisma, relayer: Pick<Relayer, "provider" | "chain">, now: () => Date, settings: SweepSettings = {}): TxHandlers {
  return {
    async mined(tx, receipt) {
      const sweep = await prisma.sweep.findFirst({ where: { txId: tx.id }, include: { charge: { select: { depositAddress: true } } } });
      if (!sweep) return;
      const address = sweep.charge.depositAddress!;
      const moved = await sweptAnything(relayer, sweep.token, address, receipt);
      const { gasUsed } = receipt;
      await endSweep(
        prisma,
        settings,
        tx.id,
        moved
          ? { done: true, gasUsed }
          : {
              done: false,
              error: "nothing moved: the token refused the transfer when it was mined",
              gasUsed,
              balanceSeen: await holding(relayer.provider, sweep.token, address, receipt.blockNumber),
            },
      );
    },
    async confirmed(tx) {
      const sweep = await prisma.sweep.findFirst({ where: { txId: tx.id, status: "DONE" } });
      if (sweep) await markDeployed(prisma, sweep.chainId, sweep.chargeId, now());
    },
    async failed(tx, receipt) {
      if (!receipt) {
        await endSweep(prisma, settings, tx.id, { done: false, error: "its transaction was dropped" });
        return;
      }
      // Reverted: it cost gas and moved nothing, so it too waits for the balance to change.
      const sweep = await prisma.sweep.findFirst({ where: { txId: tx.id }, include: { charge: { select: { depositAddress: true } } } });
      const seen = sweep && (await holding(relayer.provider, sweep.token, sweep.charge.depositAddress!, receipt.blockNumber));
      await endSweep(prisma, settings, tx.id, { done: false, error: "its transaction reverted", gasUsed: receipt.gasUsed, balanceSeen: seen });
    },
  };
}
