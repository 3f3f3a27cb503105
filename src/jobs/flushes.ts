// Payouts, the chain side: flush the clones that hold confirmed money (one clone: its own `flush`;
// several: the factory's `flushMany`). Before anything is sent, each clone's flush is simulated
// (eth_call, free): that is the balance check and the token's verdict at once.
//
//   simulation pays something   flushed (stored before broadcast, tracked by jobs/relayer-txs.ts)
//   simulation pays nothing     the clone is empty: someone else flushed it and the indexer will
//                               record their settlement; nothing is sent, looked at again later
//   simulation reverts          the token refuses (blacklisted wallet, clone or fee recipient, or
//                               paused): the payout is marked blocked, nothing is sent, and the
//                               simulation is repeated every minute until it passes
//
// The money is never counted here: the indexer records the Flushed events of every flush, ours or
// anyone's (domain/payments.ts). When our transaction is confirmed, its clones are released; one it
// did not pay counts a failure (domain/payouts.ts), so a flush that keeps failing stops and alerts.
import { Interface, isError, type TransactionReceipt } from "ethers";
import type { Logger } from "pino";
import { ChargeCloneArtifact, ChargeFactoryArtifact } from "../chain/artifacts.js";
import type { Relayer } from "../chain/relayer.js";
import { usdcInterface } from "../chain/usdc.js";
import type { Prisma } from "../db/client.js";
import type { ChangeSettings } from "../domain/charges.js";
import { blockPayouts, claimForFlush, deferPayouts, type DueClone, dueClones, type PayoutBlockReason, releaseFlush } from "../domain/payouts.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

const cloneAbi = new Interface(ChargeCloneArtifact.abi);
const factoryAbi = new Interface(ChargeFactoryArtifact.abi);
const FLUSHED_TOPIC = cloneAbi.getEvent("Flushed")!.topicHash;

/** An empty clone is looked at again after this (its flusher's settlement should be indexed by then). */
const EMPTY_RECHECK_MS = 15_000;
export interface PayoutOptions {
  /** Clones per flushMany transaction (the block gas limit bounds it; 50 uses about 2.5 M gas). */
  batchSize?: number;
  /** How long a payout the token refuses waits before it is simulated again (default a minute). */
  blockedRecheckMs?: number;
  now: () => Date;
}

/** What simulating a clone's flush said. */
type Verdict = { kind: "pays" } | { kind: "empty" } | { kind: "refused"; reason: PayoutBlockReason };

/** Flushes the clones of the relayer's chain that are due and can pay; blocks or puts off the others. */
export async function runPayouts(prisma: Prisma, relayer: Relayer, settings: ChangeSettings, logger: Logger, options: PayoutOptions): Promise<void> {
  const { batchSize = 50, blockedRecheckMs = 60_000, now } = options;
  for (;;) {
    const due = await dueClones(prisma, relayer.chain.chainId, batchSize, now());
    if (due.length === 0) return;
    const verdicts = await simulateFlushes(relayer, due);
    const payable = due.filter((_, i) => verdicts[i]!.kind === "pays");
    const empty = due.filter((_, i) => verdicts[i]!.kind === "empty");
    await deferPayouts(
      prisma,
      empty.map((c) => c.id),
      new Date(now().getTime() + EMPTY_RECHECK_MS),
    );
    const refused = new Map<PayoutBlockReason, DueClone[]>();
    due.forEach((c, i) => {
      const v = verdicts[i]!;
      if (v.kind === "refused") refused.set(v.reason, [...(refused.get(v.reason) ?? []), c]);
    });
    for (const [reason, clones] of refused) {
      const blocked = await blockPayouts(
        prisma,
        settings,
        clones.map((c) => c.id),
        reason,
        new Date(now().getTime() + blockedRecheckMs),
        now(),
      );
      const was = new Map(clones.map((c) => [c.id, c.payoutBlockedReason]));
      const fresh = blocked.filter((c) => was.get(c.id) !== reason);
      if (fresh.length > 0)
        logger.error({ reason, charges: fresh.map((c) => c.id) }, "payouts blocked: the token refuses them; the money stays safe in the clones");
    }
    if (payable.length > 0) await sendFlush(prisma, relayer, payable, logger);
    if (due.length < batchSize) return;
  }
}

/** Signs a flush of `clones`, stores it with their charges claimed, then broadcasts it. */
async function sendFlush(prisma: Prisma, relayer: Relayer, clones: DueClone[], logger: Logger): Promise<void> {
  const usdc = relayer.chain.usdc;
  const call =
    clones.length === 1
      ? { to: clones[0]!.cloneAddress, data: cloneAbi.encodeFunctionData("flush", [usdc]) }
      : { to: relayer.chain.factory, data: factoryAbi.encodeFunctionData("flushMany", [usdc, clones.map((c) => c.cloneAddress)]) };
  const ids = clones.map((c) => c.id);
  const txId = await sendRelayerTx(prisma, relayer, "FLUSH", call, (tx, id) => claimForFlush(tx, id, ids));
  if (txId) logger.info({ tx: txId, clones: clones.length }, "flush sent");
}

/**
 * Simulates each clone's flush at the latest block (in one batch of eth_calls): pays, empty, or
 * refused and why. A refusal is explained by asking the token (paused? which address blacklisted?).
 */
async function simulateFlushes(relayer: Relayer, clones: DueClone[]): Promise<Verdict[]> {
  const { provider, chain } = relayer;
  const data = cloneAbi.encodeFunctionData("flush", [chain.usdc]);
  const results = await Promise.all(
    clones.map(async (c) => {
      try {
        const [net, fee] = cloneAbi.decodeFunctionResult("flush", await provider.call({ to: c.cloneAddress, data, from: relayer.address })) as unknown as [
          bigint,
          bigint,
        ];
        return net + fee > 0n ? "pays" : "empty";
      } catch (e) {
        // Transport trouble is not a verdict: the round fails and is tried again.
        if (!isError(e, "CALL_EXCEPTION") && !isError(e, "BAD_DATA")) throw e;
        return isError(e, "BAD_DATA") ? "empty" : "refused";
      }
    }),
  );
  if (!results.includes("refused")) return results.map((kind) => ({ kind }) as Verdict);
  const reasons = await refusalReasons(
    relayer,
    clones.filter((_, i) => results[i] === "refused"),
  );
  return results.map((kind, i) => (kind === "refused" ? { kind, reason: reasons.get(clones[i]!.id)! } : { kind }));
}

/** Why the token refuses each of `clones`' flushes. */
async function refusalReasons(relayer: Relayer, clones: DueClone[]): Promise<Map<string, PayoutBlockReason>> {
  const read = async (fn: string, args: unknown[]): Promise<boolean> => {
    try {
      const out = await relayer.provider.call({ to: relayer.chain.usdc, data: usdcInterface.encodeFunctionData(fn, args) });
      return usdcInterface.decodeFunctionResult(fn, out)[0] as boolean;
    } catch (e) {
      // A token without Circle's controls (a devnet token of your own): it cannot say why.
      if (isError(e, "CALL_EXCEPTION") || isError(e, "BAD_DATA")) return false;
      throw e;
    }
  };
  const reasons = new Map<string, PayoutBlockReason>();
  if (await read("paused", [])) {
    for (const c of clones) reasons.set(c.id, "token_paused");
    return reasons;
  }
  const feeRecipient = await relayer.feeRecipient();
  const feeBlocked = await read("isBlacklisted", [feeRecipient]);
  await Promise.all(
    clones.map(async (c) => {
      const [wallet, clone] = await Promise.all([read("isBlacklisted", [c.settlementWallet]), read("isBlacklisted", [c.cloneAddress])]);
      reasons.set(c.id, wallet ? "wallet_blacklisted" : clone ? "clone_blacklisted" : feeBlocked ? "fee_recipient_blacklisted" : "flush_reverting");
    }),
  );
  return reasons;
}

/** What the outcome of one of our flushes does to its charges. */
export function flushHandlers(prisma: Prisma, settings: ChangeSettings, logger: Logger, now: () => Date): TxHandlers {
  return {
    async mined() {},
    async confirmed(tx, receipt) {
      await releaseFlush(prisma, settings, tx.id, { kind: "confirmed", paid: flushedClones(receipt) }, logger, now());
    },
    async failed(tx, receipt) {
      await releaseFlush(prisma, settings, tx.id, receipt ? { kind: "reverted" } : { kind: "dropped" }, logger, now());
    },
  };
}

/** The clones a receipt's Flushed events paid out. */
function flushedClones(receipt: TransactionReceipt): Set<string> {
  return new Set(receipt.logs.filter((l) => l.topics[0] === FLUSHED_TOPIC).map((l) => l.address));
}
