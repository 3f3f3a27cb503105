// Payouts, the chain side: pay out the clones that hold confirmed money. Version 2 clones go in batches
// through ChargeFactoryV2's `payout`, which deploys a clone that has no code yet in the same
// transaction (a charge whose buyer never paid costs no gas at all); each pays exactly what the ledger
// says it holds. A version 1 clone is flushed alone (deployed first by its factory if it never was).
// Before anything is sent, the payout is simulated (eth_call, free; one for a whole version 2 batch,
// whose factory reports each clone on its own): that is the balance check and the token's verdict at once.
//
//   simulation pays              sent (stored before broadcast, tracked by jobs/relayer-txs.ts)
//   the clone holds less         someone else's payout took it (the indexer will record it): nothing
//                                is sent, looked at again later
//   the token refuses            blocked (a blacklisted wallet or clone, a paused token): nothing is
//                                sent, and the simulation is repeated every minute until it passes
//   no code, though recorded     a reorg took the deployment (one we did not see go: a sweep's, or
//   deployed                     beyond the blocks we keep): forgotten, so the next payout deploys it
//
// The money is never counted here: the indexer records every transfer out of a clone, ours or anyone's
// (domain/chain-transfers.ts). When our transaction is confirmed its clones are released; one it did
// not pay counts a failure (domain/payouts.ts), so a payout that keeps failing stops and alerts.
import { Interface, isError, type TransactionReceipt } from "ethers";
import type { Logger } from "pino";
import { ChargeCloneV1Artifact, ChargeFactoryV1Artifact, ChargeFactoryV2Artifact } from "../chain/artifacts.js";
import { chargeKey, payoutWords } from "../chain/clones.js";
import type { Relayer } from "../chain/relayer.js";
import { usdcInterface } from "../chain/usdc.js";
import type { Prisma } from "../db/client.js";
import type { ChangeSettings } from "../domain/charges.js";
import {
  blockPayouts,
  claimForFlush,
  deferPayouts,
  type DueClone,
  dueClones,
  forgetDeployments,
  type PayoutBlockReason,
  releaseFlush,
} from "../domain/payouts.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

const factoryV2 = new Interface(ChargeFactoryV2Artifact.abi);
const factoryV1 = new Interface(ChargeFactoryV1Artifact.abi);
const cloneV1 = new Interface(ChargeCloneV1Artifact.abi);
const TRANSFER_TOPIC = usdcInterface.getEvent("Transfer")!.topicHash;
/** ChargeFactoryV2.FAILED: what `payout` reports for a clone it could not pay. */
const FAILED = 2n ** 256n - 1n;

/** A clone whose money has left (someone else's payout) is looked at again after this. */
const EMPTY_RECHECK_MS = 15_000;

export interface PayoutOptions {
  /** Clones per payout transaction (the block gas limit bounds it; 50 use about 3 M gas). */
  batchSize?: number;
  /** How long a payout the token refuses waits before it is simulated again (default a minute). */
  blockedRecheckMs?: number;
  /** The chain's payout minimum (EnabledChain.payoutMinAmount): less money that completes no charge waits in the clone for more. */
  payoutMinAmount: bigint;
  now: () => Date;
}

/** What simulating a clone's payout said ("undeployed": recorded deployed, yet no code there). */
type Verdict = { kind: "pays" } | { kind: "empty" } | { kind: "undeployed" } | { kind: "refused"; reason: PayoutBlockReason };

/** Pays out the clones of the relayer's chain that are due and can pay; blocks or puts off the others. */
export async function runPayouts(prisma: Prisma, relayer: Relayer, settings: ChangeSettings, logger: Logger, options: PayoutOptions): Promise<void> {
  const { batchSize = 50, blockedRecheckMs = 60_000, now } = options;
  const chainId = relayer.chain.chainId;
  for (;;) {
    const due = await dueClones(prisma, chainId, batchSize, options.payoutMinAmount, now());
    if (due.length === 0) return;
    const batch = await simulateBatch(
      relayer,
      due.filter((c) => c.version === 2),
    );
    const verdicts = await Promise.all(due.map((c) => simulate(relayer, c, batch.get(c.chargeId))));
    const undeployed = due.filter((_, i) => verdicts[i]!.kind === "undeployed").map((c) => c.chargeId);
    if (undeployed.length > 0) {
      await forgetDeployments(prisma, chainId, undeployed);
      logger.warn({ charges: undeployed }, "clones recorded as deployed have no code (a reorg took their deployment): their next payout deploys them again");
    }
    const empty = due.filter((_, i) => verdicts[i]!.kind === "empty");
    await deferPayouts(
      prisma,
      chainId,
      empty.map((c) => c.chargeId),
      new Date(now().getTime() + EMPTY_RECHECK_MS),
    );
    const refused = new Map<PayoutBlockReason, DueClone[]>();
    due.forEach((c, i) => {
      const v = verdicts[i]!;
      if (v.kind === "refused") refused.set(v.reason, [...(refused.get(v.reason) ?? []), c]);
    });
    for (const [reason, clones] of refused) {
      await blockPayouts(
        prisma,
        settings,
        chainId,
        clones.map((c) => c.chargeId),
        reason,
        new Date(now().getTime() + blockedRecheckMs),
        now(),
      );
      const fresh = clones.filter((c) => c.payoutBlockedReason !== reason);
      if (fresh.length > 0) {
        logger.error({ reason, charges: fresh.map((c) => c.chargeId) }, "payouts blocked: the token refuses them; the money stays safe in the clones");
      }
    }
    const payable = due.filter((_, i) => verdicts[i]!.kind === "pays");
    const v2 = payable.filter((c) => c.version === 2);
    if (v2.length > 0) await sendPayout(prisma, relayer, v2, payoutV2Call(relayer, v2), logger);
    for (const c of payable.filter((c) => c.version === 1)) await sendPayout(prisma, relayer, [c], payoutV1Call(relayer, c), logger);
    if (due.length < batchSize) return;
  }
}

/** ChargeFactoryV2's payout of `clones`' USDC: each pays what the ledger says it holds, created if it has no code. */
function payoutV2Call(relayer: Relayer, clones: DueClone[]): { to: string; data: string } {
  const entries = clones.flatMap((c) => payoutWords({ chargeId: c.chargeId, wallet: c.wallet, feeBps: c.feeBps, amount: c.held, deployed: c.deployed }));
  return { to: relayer.chain.factory, data: factoryV2.encodeFunctionData("payout", [relayer.chain.usdc, entries]) };
}

/** A version 1 clone's payout: its own flush, or its factory's deployAndFlush when it never had code. */
function payoutV1Call(relayer: Relayer, c: DueClone): { to: string; data: string } {
  const usdc = relayer.chain.usdc;
  if (c.deployed) return { to: c.address, data: cloneV1.encodeFunctionData("flush", [usdc]) };
  return { to: relayer.chain.v1!.factory, data: factoryV1.encodeFunctionData("deployAndFlush", [chargeKey(c.chargeId), c.wallet, c.feeBps, usdc]) };
}

/** Signs a payout of `clones`, stores it with them claimed, then broadcasts it. */
async function sendPayout(prisma: Prisma, relayer: Relayer, clones: DueClone[], call: { to: string; data: string }, logger: Logger): Promise<void> {
  // Pre-warmed storage saves gas; clones the call creates are warm anyway.
  const accessList = await relayer.accessList(
    call,
    clones.map((c) => c.address),
  );
  const ids = clones.map((c) => c.chargeId);
  const txId = await sendRelayerTx(prisma, relayer, "FLUSH", { ...call, ...(accessList && { accessList }) }, (tx, id) =>
    claimForFlush(tx, id, relayer.chain.chainId, ids),
  );
  if (txId) logger.info({ tx: txId, clones: clones.length }, "payout sent");
}

/**
 * What one simulated payout of all of `clones` (version 2) would pay each, by charge id: ChargeFactoryV2
 * reports each entry on its own, so one eth_call gives every verdict that is "pays". Empty when the
 * call as a whole fails; each clone is then simulated alone.
 */
async function simulateBatch(relayer: Relayer, clones: DueClone[]): Promise<Map<string, bigint>> {
  if (clones.length === 0) return new Map();
  try {
    const out = await relayer.provider.call({ ...payoutV2Call(relayer, clones), from: relayer.address });
    const paid = factoryV2.decodeFunctionResult("payout", out)[0] as bigint[];
    return new Map(clones.map((c, i) => [c.chargeId, paid[i]!]));
  } catch (e) {
    if (!isError(e, "CALL_EXCEPTION") && !isError(e, "BAD_DATA")) throw e;
    return new Map();
  }
}

/**
 * Simulates a clone's payout at the latest block (unless the batch's simulation already says what it
 * pays): pays, holds less than the ledger says (someone else's payout took it), or refused and why
 * (the token is asked: paused? which address blacklisted?).
 */
async function simulate(relayer: Relayer, c: DueClone, inBatch?: bigint): Promise<Verdict> {
  const { provider, chain } = relayer;
  if (c.version === 1 && !c.deployed && !chain.v1 && !(await hasCode(relayer, c.address))) return { kind: "refused", reason: "contract_unavailable" };
  let paid: bigint;
  if (inBatch !== undefined) paid = inBatch;
  else {
    const call = c.version === 2 ? payoutV2Call(relayer, [c]) : payoutV1Call(relayer, { ...c, deployed: c.deployed || (await hasCode(relayer, c.address)) });
    try {
      const out = await provider.call({ ...call, from: relayer.address });
      paid = c.version === 2 ? (factoryV2.decodeFunctionResult("payout", out)[0] as bigint[])[0]! : sumOfV1(out, call.to === c.address);
    } catch (e) {
      // Transport trouble is not a verdict: the round fails and is tried again.
      if (!isError(e, "CALL_EXCEPTION") && !isError(e, "BAD_DATA")) throw e;
      paid = FAILED;
    }
  }
  if (paid !== FAILED && paid > 0n) return { kind: "pays" };
  if (c.version === 2 && c.deployed && !(await hasCode(relayer, c.address))) return { kind: "undeployed" };
  const balance = (await readToken(relayer, "balanceOf", [c.address])) as bigint;
  if (balance < c.held) return { kind: "empty" };
  return { kind: "refused", reason: await refusalReason(relayer, c) };
}

/** What a version 1 flush (or deployAndFlush) returned: net + fee. */
function sumOfV1(out: string, direct: boolean): bigint {
  const r = direct ? cloneV1.decodeFunctionResult("flush", out) : factoryV1.decodeFunctionResult("deployAndFlush", out).slice(1);
  return (r[0] as bigint) + (r[1] as bigint);
}

async function hasCode(relayer: Relayer, address: string): Promise<boolean> {
  return (await relayer.provider.getCode(address)) !== "0x";
}

/** Why the token refuses `c`'s payout. */
async function refusalReason(relayer: Relayer, c: DueClone): Promise<PayoutBlockReason> {
  const read = async (fn: string, args: unknown[]): Promise<boolean> => {
    try {
      return (await readToken(relayer, fn, args)) as boolean;
    } catch (e) {
      // A token without Circle's controls (a devnet token of your own): it cannot say why.
      if (isError(e, "CALL_EXCEPTION") || isError(e, "BAD_DATA")) return false;
      throw e;
    }
  };
  if (await read("paused", [])) return "token_paused";
  const [wallet, clone] = await Promise.all([read("isBlacklisted", [c.wallet]), read("isBlacklisted", [c.address])]);
  if (wallet) return "wallet_blacklisted";
  if (clone) return "clone_blacklisted";
  // Version 2 pays the merchant whatever happens to the fee; version 1 needs the fee recipient too.
  if (c.version === 1 && (await read("isBlacklisted", [relayer.chain.feeRecipient]))) return "fee_recipient_blacklisted";
  return "flush_reverting";
}

async function readToken(relayer: Relayer, fn: string, args: unknown[]): Promise<unknown> {
  const out = await relayer.provider.call({ to: relayer.chain.usdc, data: usdcInterface.encodeFunctionData(fn, args) });
  return usdcInterface.decodeFunctionResult(fn, out)[0];
}

/** What the outcome of one of our payouts does to its clones. */
export function payoutHandlers(prisma: Prisma, settings: ChangeSettings, logger: Logger, now: () => Date): TxHandlers {
  return {
    async mined() {},
    async confirmed(tx, receipt) {
      await releaseFlush(prisma, settings, tx.id, { kind: "confirmed", paid: clonesThatPaid(receipt) }, logger, now());
    },
    async failed(tx, receipt) {
      await releaseFlush(prisma, settings, tx.id, receipt ? { kind: "reverted" } : { kind: "dropped" }, logger, now());
    },
  };
}

/** The addresses (lower case) that sent USDC in a receipt: the clones it paid out. */
function clonesThatPaid(receipt: TransactionReceipt): Set<string> {
  return new Set(receipt.logs.filter((l) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3).map((l) => `0x${l.topics[1]!.slice(26)}`.toLowerCase()));
}
