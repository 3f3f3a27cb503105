// Settlement, the chain side: flush the clones that hold confirmed money (one clone: its own
// `flush`; several: the factory's `flushMany`), follow each flush transaction to its confirmations,
// then apply its Flushed events (domain/settlement.ts). Runs only in the process holding the chain's
// lock, after the indexer, each tick. A flush row moves SENT → MINED → CONFIRMED (or FAILED).
//
// Invariants, whatever crashes where:
// - a flush is signed and stored, with its charges claimed, before it is broadcast; a stored flush
//   is only ever re-sent (the same transaction) or replaced at the same nonce (a fee bump), so at
//   most one version of it can be mined;
// - its charges are released for a new flush only when no version can be mined any more: one
//   reverted, or the nonce was used while none of its versions has a receipt;
// - it is applied only when its block has the chain's confirmations and is still the block the
//   node has for it; a reorg sends it back to SENT.
import { Interface, type TransactionReceipt } from "ethers";
import type { Logger } from "pino";
import { ChargeCloneArtifact, ChargeFactoryArtifact } from "../chain/artifacts.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import type { ChangeSettings } from "../domain/charges.js";
import { newId } from "../domain/ids.js";
import { applyFlush, dueClones, FLUSH_RETRY_MS, type Flushed, failFlush, recordFlush } from "../domain/settlement.js";

const cloneAbi = new Interface(ChargeCloneArtifact.abi);
const factoryAbi = new Interface(ChargeFactoryArtifact.abi);
const FLUSHED_TOPIC = cloneAbi.getEvent("Flushed")!.topicHash;

export interface FlushOptions {
  /** Clones per flushMany transaction (the block gas limit bounds it; 50 uses about 1 M gas). */
  batchSize?: number;
  /** How long a sent flush may stay unmined before it is replaced with higher fees (RELAYER_BUMP_AFTER_MS). */
  bumpAfterMs: number;
  now?: () => Date;
}

interface OpenFlush {
  id: string;
  status: "SENT" | "MINED";
  nonce: number;
  rawTx: string;
  txHashes: string[];
  txHash: string | null;
  blockNumber: bigint | null;
  blockHash: string | null;
  sentAt: Date;
  lastError: string | null;
}

/** Moves every open flush of the relayer's chain along, then flushes the clones that are due. */
export async function runFlushes(
  prisma: Prisma,
  relayer: Relayer,
  settings: ChangeSettings,
  tip: bigint,
  logger: Logger,
  options: FlushOptions,
): Promise<void> {
  const { batchSize = 50, bumpAfterMs, now = () => new Date() } = options;
  const chainId = relayer.chain.chainId;
  const open = await prisma.flush.findMany({ where: { chainId, status: { in: ["SENT", "MINED"] } }, orderBy: { nonce: "asc" } });
  for (const flush of open as OpenFlush[]) {
    const mined = flush.status === "SENT" ? await trackSent(prisma, relayer, flush, { bumpAfterMs, now }, logger) : { flush, receipt: null };
    if (mined) await confirmMined(prisma, relayer, settings, mined.flush, mined.receipt, tip, now(), logger);
  }
  for (;;) {
    const due = await dueClones(prisma, chainId, batchSize, now());
    if (due.length === 0) return;
    await sendFlush(prisma, relayer, due, logger);
    if (due.length < batchSize) return;
  }
}

/** Signs a flush of `due`, stores it with its charges claimed, then broadcasts it. */
async function sendFlush(prisma: Prisma, relayer: Relayer, due: { id: string; cloneAddress: string }[], logger: Logger): Promise<void> {
  const usdc = relayer.chain.usdc;
  const call =
    due.length === 1
      ? { to: due[0]!.cloneAddress, data: cloneAbi.encodeFunctionData("flush", [usdc]) }
      : { to: relayer.chain.factory, data: factoryAbi.encodeFunctionData("flushMany", [usdc, due.map((c) => c.cloneAddress)]) };
  const signed = await relayer.sign(call);
  const id = newId("flush");
  if (
    !(await recordFlush(
      prisma,
      { id, chainId: relayer.chain.chainId, nonce: signed.nonce, rawTx: signed.raw, txHash: signed.hash },
      due.map((c) => c.id),
    ))
  ) {
    // Never broadcast: give the nonce back.
    relayer.resetNonce();
    return;
  }
  logger.info({ flush: id, clones: due.length, tx: signed.hash, nonce: signed.nonce }, "flush sent");
  await broadcast(prisma, relayer, id, signed.raw);
}

/** Broadcasts a stored version; a failure is recorded so the next tick sends it again. */
async function broadcast(prisma: Prisma, relayer: Relayer, flushId: string, raw: string): Promise<void> {
  let lastError: string | null = null;
  try {
    // false: the nonce is used. Either this flush was mined already or another transaction took
    // the nonce; the receipts tell which on the next tick.
    if (!(await relayer.broadcast(raw))) lastError = "nonce already used";
  } catch (e) {
    lastError = (e as Error).message.slice(0, 500);
  }
  await prisma.flush.update({ where: { id: flushId }, data: { lastError } });
}

/**
 * Looks for a mined version of a SENT flush; re-sends or replaces it when it is late. Returns the
 * flush, now MINED, with its receipt when one was mined, else null.
 */
async function trackSent(
  prisma: Prisma,
  relayer: Relayer,
  flush: OpenFlush,
  o: { bumpAfterMs: number; now: () => Date },
  logger: Logger,
): Promise<{ flush: OpenFlush; receipt: TransactionReceipt } | null> {
  const receipt = await minedVersion(relayer, flush.txHashes);
  if (receipt) {
    if (receipt.status !== 1) {
      logger.error({ flush: flush.id, tx: receipt.hash }, "flush reverted; its clones will be flushed again");
      await failFlush(prisma, flush.id, `transaction ${receipt.hash} reverted`, new Date(o.now().getTime() + FLUSH_RETRY_MS));
      return null;
    }
    const mined = { status: "MINED" as const, txHash: receipt.hash, blockNumber: BigInt(receipt.blockNumber), blockHash: receipt.blockHash, lastError: null };
    await prisma.flush.update({ where: { id: flush.id }, data: mined });
    logger.info({ flush: flush.id, tx: receipt.hash, block: receipt.blockNumber }, "flush mined");
    return { flush: { ...flush, ...mined }, receipt };
  }
  const age = o.now().getTime() - flush.sentAt.getTime();
  if (!flush.lastError && age < o.bumpAfterMs) return null;
  if ((await relayer.minedNonce()) > flush.nonce) {
    // The nonce is used. Ask once more: this flush may have been mined since the first look.
    if (await minedVersion(relayer, flush.txHashes)) return null;
    logger.warn({ flush: flush.id, nonce: flush.nonce }, "another transaction used the flush's nonce; its clones will be flushed again");
    relayer.resetNonce();
    await failFlush(prisma, flush.id, "another transaction used its nonce", null);
    return null;
  }
  if (age < o.bumpAfterMs) {
    await broadcast(prisma, relayer, flush.id, flush.rawTx);
    return null;
  }
  const replacement = await relayer.replace(flush.rawTx);
  await prisma.flush.update({
    where: { id: flush.id },
    data: { rawTx: replacement.raw, txHashes: { push: replacement.hash }, bumps: { increment: 1 }, sentAt: o.now() },
  });
  logger.warn({ flush: flush.id, tx: replacement.hash, waitedMs: age }, "flush not mined in time; replaced with higher fees");
  await broadcast(prisma, relayer, flush.id, replacement.raw);
  return null;
}

/**
 * Applies a mined flush once its block has the confirmations and is still on the chain. `fresh` is
 * its receipt when it was read this tick (no need to ask the node again).
 */
async function confirmMined(
  prisma: Prisma,
  relayer: Relayer,
  settings: ChangeSettings,
  flush: OpenFlush,
  fresh: TransactionReceipt | null,
  tip: bigint,
  now: Date,
  logger: Logger,
): Promise<void> {
  if (flush.blockNumber! + BigInt(relayer.chain.confirmations) - 1n > tip) return;
  const receipt = fresh ?? (await relayer.receipt(flush.txHash!));
  if (!receipt || receipt.blockHash !== flush.blockHash) {
    logger.warn({ flush: flush.id, tx: flush.txHash }, "flush's block was reorganised away; sending it again");
    await prisma.flush.update({ where: { id: flush.id }, data: { status: "SENT", txHash: null, blockNumber: null, blockHash: null } });
    await broadcast(prisma, relayer, flush.id, flush.rawTx);
    return;
  }
  const changed = await applyFlush(prisma, settings, flush.id, receipt.hash, flushedByClone(receipt), now);
  if (changed) logger.info({ flush: flush.id, tx: receipt.hash, charges: changed.length }, "flush confirmed");
}

/** The receipt of whichever version of a flush was mined, or null. */
async function minedVersion(relayer: Relayer, hashes: string[]): Promise<TransactionReceipt | null> {
  const receipts = await Promise.all(hashes.map((h) => relayer.receipt(h)));
  return receipts.find((r) => r !== null) ?? null;
}

/** The Flushed events of a receipt, by clone address. */
function flushedByClone(receipt: TransactionReceipt): Map<string, Flushed> {
  const out = new Map<string, Flushed>();
  for (const log of receipt.logs) {
    if (log.topics[0] !== FLUSHED_TOPIC) continue;
    const parsed = cloneAbi.parseLog(log)!;
    out.set(log.address, { net: parsed.args.getValue("net") as bigint, fee: parsed.args.getValue("fee") as bigint });
  }
  return out;
}
