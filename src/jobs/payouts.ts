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
// Anyone may deploy a clone (ChargeFactoryV2.deploy), and `payout` creating one onto existing code
// burns the creation's whole allowance (CREATE_GAS, 60k, against ~41k for a real creation). So no
// stranger can stall a payout:
// - before a round is simulated, the due clones not recorded as deployed are asked for their code (one
//   batched read) and those that have some are recorded deployed: their entries carry DEPLOYED;
// - a version 2 batch is sent with gas for every creation in it to collide (FRONT_RUN_GAS each, on top
//   of the estimate) plus the relayer's headroom: a stranger deploying clones between our estimate and
//   inclusion costs us a little gas, never the transaction;
// - a batch that reverts anyway splits itself: its clones are due again at once in batches of half its
//   size (domain/payouts.ts), until a clone that fails alone is found; only that one counts failures.
//
// The money is never counted here: the indexer records every transfer out of a clone, ours or anyone's
// (domain/chain-transfers.ts). When our transaction is confirmed its clones are released; one it did
// not pay counts a failure (domain/payouts.ts), so a payout that keeps failing stops and alerts.
import { Interface, isError, type TransactionReceipt } from "ethers";
import type { Logger } from "pino";
import { ChargeCloneV1Artifact, ChargeFactoryV1Artifact, ChargeFactoryV2Artifact } from "../chain/artifacts.js";
import { chargeKey, payoutWords } from "../chain/clones.js";
import type { Relayer } from "../chain/relayer.js";
import { withRpcRetry } from "../chain/rpc.js";
import { usdcInterface } from "../chain/usdc.js";
import type { Prisma } from "../db/client.js";
import { type ChangeSettings, dustLimit } from "../domain/charges/settings.js";
import {
  blockPayouts,
  claimForFlush,
  deferPayouts,
  type DueClone,
  dueClones,
  forgetDeployments,
  markClonesDeployed,
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
/**
 * The most a creation in `payout` can cost beyond what the estimate saw, should a stranger deploy the
 * clone first: the call's whole CREATE_GAS (60k) against at least CREATE2's own 32k for a real one.
 */
const FRONT_RUN_GAS = 28_000n;

/**
 * The gas a version 2 payout batch needs, from its estimate and the clones it creates: enough for every
 * creation to collide with a stranger's deployment between the estimate and inclusion (the relayer adds
 * its headroom on top). The relayer pays only for gas used, so this costs nothing unless it is needed.
 */
export function payoutGasNeeded(estimate: bigint, creations: number): bigint {
  return estimate + BigInt(creations) * FRONT_RUN_GAS;
}

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
    const due = await dueClones(prisma, chainId, batchSize, { payoutMinAmount: options.payoutMinAmount, dust: dustLimit(settings) }, now());
    if (due.length === 0) return;
    await recordDeployedByOthers(prisma, relayer, due, logger, now());
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
    for (const v2 of batches(
      payable.filter((c) => c.version === 2),
      batchSize,
    )) {
      await sendPayout(prisma, relayer, v2, payoutV2Call(relayer, v2), logger);
    }
    for (const c of payable.filter((c) => c.version === 1)) await sendPayout(prisma, relayer, [c], payoutV1Call(relayer, c), logger);
    if (due.length < batchSize) return;
  }
}

/**
 * Records the clones of `due` that have code though we never saw them deployed (anyone may deploy a
 * clone), so their payout entries say so; `due` is updated in place. One batched read: the provider
 * sends the concurrent eth_getCode calls as one JSON-RPC batch.
 */
async function recordDeployedByOthers(prisma: Prisma, relayer: Relayer, due: DueClone[], logger: Logger, at: Date): Promise<void> {
  const unflagged = due.filter((c) => !c.deployed);
  if (unflagged.length === 0) return;
  const codes = await withRpcRetry(() => Promise.all(unflagged.map((c) => relayer.provider.getCode(c.address))));
  const found = unflagged.filter((_, i) => codes[i] !== "0x");
  if (found.length === 0) return;
  await markClonesDeployed(
    prisma,
    relayer.chain.chainId,
    found.map((c) => c.chargeId),
    at,
  );
  for (const c of found) c.deployed = true;
  logger.info({ charges: found.map((c) => c.chargeId) }, "clones deployed by someone else: their payout does not create them again");
}

/** `clones` in order, cut into payout batches: none larger than `batchSize` or than any member's `batchMax`. */
function batches(clones: DueClone[], batchSize: number): DueClone[][] {
  const out: DueClone[][] = [];
  let current: DueClone[] = [];
  let limit = batchSize;
  for (const c of clones) {
    const cap = Math.min(batchSize, c.batchMax ?? batchSize);
    if (current.length > 0 && current.length + 1 > Math.min(limit, cap)) {
      out.push(current);
      current = [];
      limit = batchSize;
    }
    current.push(c);
    limit = Math.min(limit, cap);
  }
  if (current.length > 0) out.push(current);
  return out;
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

/**
 * Signs a payout of `clones`, stores it with them claimed, then broadcasts it. A version 2 batch gets
 * gas for each of its creations to collide with a stranger's deployment (payoutGasNeeded).
 */
async function sendPayout(prisma: Prisma, relayer: Relayer, clones: DueClone[], call: { to: string; data: string }, logger: Logger): Promise<void> {
  // Pre-warmed storage saves gas; clones the call creates are warm anyway.
  const accessList = await relayer.accessList(
    call,
    clones.map((c) => c.address),
  );
  const request = { ...call, ...(accessList && { accessList }) };
  const creations = clones.filter((c) => c.version === 2 && !c.deployed).length;
  const gasNeeded =
    creations > 0 ? payoutGasNeeded(await withRpcRetry(() => relayer.provider.estimateGas({ ...request, from: relayer.address })), creations) : undefined;
  const ids = clones.map((c) => c.chargeId);
  const txId = await sendRelayerTx(
    prisma,
    relayer,
    "FLUSH",
    request,
    (tx, id) => claimForFlush(tx, id, relayer.chain.chainId, ids),
    gasNeeded === undefined ? {} : { gasNeeded },
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
  // `deployed` was checked against the chain this round (recordDeployedByOthers).
  if (c.version === 1 && !c.deployed && !chain.v1) return { kind: "refused", reason: "contract_unavailable" };
  let paid: bigint;
  if (inBatch !== undefined) paid = inBatch;
  else {
    const call = c.version === 2 ? payoutV2Call(relayer, [c]) : payoutV1Call(relayer, c);
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
