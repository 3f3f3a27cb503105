// The relayer's transactions, from signature to confirmation, whatever they are for (a batch of
// clone deployments, a payout). Runs only in the process holding the chain's lock. A transaction
// row moves SENT → MINED → CONFIRMED, or to FAILED (the rows are written by
// domain/relayer-transactions.ts); what it was for reacts through handlers.
//
// Invariants, whatever crashes where:
// - a transaction is signed and stored, with what it is for claimed in the same database
//   transaction, before it is broadcast; a stored one is only ever re-sent (the very same bytes) or
//   replaced at the same nonce (a fee bump), so at most one version of it can be mined;
// - it fails only when no version can be mined any more: one reverted, or its nonce was used while
//   none of its versions has a receipt;
// - it is confirmed only when its block has the chain's confirmations and is still the block the
//   node has for it; a reorg sends it back to SENT and it is broadcast again;
// - no nonce of ours stays unused below an open transaction: a gap (a transaction a deep reorg took
//   away, a cached nonce ahead of the chain) is filled with the transaction stored for that nonce,
//   or with one that does nothing;
// - a handler runs before the status it reacts to is stored, and handlers are idempotent: a crash
//   in between runs the handler again, never skips it.
import type { AccessList, TransactionReceipt } from "ethers";
import type { Logger } from "pino";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import {
  markRelayerTxConfirmed,
  markRelayerTxFailed,
  markRelayerTxMined,
  openRelayerTxs,
  recordBroadcast,
  recordReplacement,
  recordWaitAtCeiling,
  type RelayerTxClaim,
  reopenRelayerTx,
  storeNonceFiller,
  storeRelayerTx,
} from "../domain/relayer-transactions.js";
import type { RelayerTxKind } from "../generated/prisma/client.js";

/** A relayer transaction still on its way. */
export interface OpenTx {
  id: string;
  kind: RelayerTxKind;
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

/** How one kind of transaction reacts to what happens to it. */
export interface TxHandlers {
  /** Mined with success (its confirmations may still be coming). */
  mined(tx: OpenTx, receipt: TransactionReceipt): Promise<void>;
  /** Has its confirmations and is still on the chain. */
  confirmed(tx: OpenTx, receipt: TransactionReceipt): Promise<void>;
  /** Will never do anything: it reverted (`receipt`), or it was dropped (`receipt` null: its nonce went to another transaction). */
  failed(tx: OpenTx, receipt: TransactionReceipt | null): Promise<void>;
}

export interface TrackOptions {
  /** How long a sent transaction may stay unmined before it is replaced with higher fees (RELAYER_BUMP_AFTER_MS). */
  bumpAfterMs: number;
  now: () => Date;
}

/** Handlers for transactions that only keep the relayer's nonces in order (a gap's filler, an old kind). */
export const IGNORED: TxHandlers = { async mined() {}, async confirmed() {}, async failed() {} };

/**
 * Signs `call` (with `gasNeeded` plus headroom, or the node's estimate plus headroom), stores it as a `kind` transaction with `claim` (what it is for, marked in the same
 * database transaction), then broadcasts it. Returns its id, or null when `claim` found its work
 * taken (nothing is stored or sent, and the nonce is given back).
 */
export async function sendRelayerTx(
  prisma: Prisma,
  relayer: Relayer,
  kind: RelayerTxKind,
  call: { to: string; data: string; accessList?: AccessList },
  claim: RelayerTxClaim,
  options: { gasNeeded?: bigint } = {},
): Promise<string | null> {
  const signed = await relayer.sign(call, options);
  const id = await storeRelayerTx(prisma, { chainId: relayer.chain.chainId, kind, nonce: signed.nonce, raw: signed.raw, hash: signed.hash }, claim);
  if (!id) {
    // Never broadcast: give the nonce back.
    relayer.resetNonce();
    return null;
  }
  await broadcast(prisma, relayer, id, signed.raw);
  return id;
}

/** Moves every open transaction of the relayer's chain along, in nonce order, up to the indexed `tip`. */
export async function trackRelayerTxs(
  prisma: Prisma,
  relayer: Relayer,
  tip: bigint,
  handlers: Record<RelayerTxKind, TxHandlers>,
  options: TrackOptions,
  logger: Logger,
): Promise<void> {
  const open = (await openRelayerTxs(prisma, relayer.chain.chainId)) as OpenTx[];
  await healNonceGap(prisma, relayer, open, options, logger);
  for (const tx of open) {
    const handler = handlers[tx.kind];
    const mined = tx.status === "SENT" ? await trackSent(prisma, relayer, tx, handler, options, logger) : { tx, receipt: null };
    if (mined) await confirmMined(prisma, relayer, mined.tx, mined.receipt, tip, handler, logger);
  }
}

/** Broadcasts a stored version; a failure is recorded so the next look sends it again. */
async function broadcast(prisma: Prisma, relayer: Relayer, txId: string, raw: string): Promise<void> {
  let lastError: string | null = null;
  try {
    // false: the nonce is used. Either this transaction was mined already or another took the
    // nonce; the receipts tell which on the next look.
    if (!(await relayer.broadcast(raw))) lastError = "nonce already used";
  } catch (e) {
    lastError = (e as Error).message.slice(0, 500);
  }
  await recordBroadcast(prisma, txId, lastError);
}

/**
 * Looks for a mined version of a SENT transaction; re-sends or replaces it when it is late. Returns
 * the transaction, now MINED, with its receipt when one was mined with success, else null.
 */
async function trackSent(
  prisma: Prisma,
  relayer: Relayer,
  tx: OpenTx,
  handler: TxHandlers,
  o: TrackOptions,
  logger: Logger,
): Promise<{ tx: OpenTx; receipt: TransactionReceipt } | null> {
  const log = logger.child({ tx: tx.id, kind: tx.kind });
  const receipt = await minedVersion(relayer, tx.txHashes);
  if (receipt) {
    if (receipt.status !== 1) {
      log.error({ hash: receipt.hash, block: receipt.blockNumber }, "relayer transaction reverted");
      await handler.failed(tx, receipt);
      await markRelayerTxFailed(prisma, tx.id, { txHash: receipt.hash, lastError: "reverted" });
      return null;
    }
    const mined = { txHash: receipt.hash, blockNumber: BigInt(receipt.blockNumber), blockHash: receipt.blockHash };
    const minedTx = { ...tx, ...mined, status: "MINED" as const, lastError: null };
    await handler.mined(minedTx, receipt);
    await markRelayerTxMined(prisma, tx.id, mined);
    log.info({ hash: receipt.hash, block: receipt.blockNumber }, "relayer transaction mined");
    return { tx: minedTx, receipt };
  }
  const age = o.now().getTime() - tx.sentAt.getTime();
  if (!tx.lastError && age < o.bumpAfterMs) return null;
  if ((await relayer.minedNonce()) > tx.nonce) {
    // The nonce is used. Ask once more: this transaction may have been mined since the first look.
    if (await minedVersion(relayer, tx.txHashes)) return null;
    log.warn({ nonce: tx.nonce }, "another transaction used this one's nonce; what it was for is tried again");
    relayer.resetNonce();
    await handler.failed(tx, null);
    await markRelayerTxFailed(prisma, tx.id, { lastError: "another transaction used its nonce" });
    return null;
  }
  if (age < o.bumpAfterMs) {
    await broadcast(prisma, relayer, tx.id, tx.rawTx);
    return null;
  }
  const replacement = await relayer.replace(tx.rawTx);
  if (!replacement) {
    // At the chain's fee ceiling: it waits as it is (and counts as stuck past the chain's limit).
    await broadcast(prisma, relayer, tx.id, tx.rawTx);
    await recordWaitAtCeiling(prisma, tx.id, o.now());
    log.warn(
      { waitedMs: age, ceiling: relayer.chain.maxFeePerGas.toString() },
      "relayer transaction not mined in time, but its fees are at the chain's ceiling; waiting",
    );
    return null;
  }
  await recordReplacement(prisma, tx.id, replacement, o.now());
  log.warn({ hash: replacement.hash, waitedMs: age }, "relayer transaction not mined in time; replaced with higher fees");
  await broadcast(prisma, relayer, tx.id, replacement.raw);
  return null;
}

/**
 * Confirms a mined transaction once its block has the confirmations and is still on the chain.
 * `fresh` is its receipt when it was read this round (no need to ask the node again).
 */
async function confirmMined(
  prisma: Prisma,
  relayer: Relayer,
  tx: OpenTx,
  fresh: TransactionReceipt | null,
  tip: bigint,
  handler: TxHandlers,
  logger: Logger,
): Promise<void> {
  if (tx.blockNumber! + BigInt(relayer.chain.confirmations) - 1n > tip) return;
  const receipt = fresh ?? (await relayer.receipt(tx.txHash!));
  if (!receipt || receipt.blockHash !== tx.blockHash) {
    logger.warn({ tx: tx.id, kind: tx.kind, hash: tx.txHash }, "relayer transaction's block was reorganised away; sending it again");
    await reopenRelayerTx(prisma, tx.id);
    await broadcast(prisma, relayer, tx.id, tx.rawTx);
    return;
  }
  await handler.confirmed(tx, receipt);
  await markRelayerTxConfirmed(prisma, tx.id);
}

/**
 * Fills the nonces below our lowest waiting transaction that the chain has not used: the chain would
 * never mine that transaction, nor any after it. Each gap nonce gets the transaction stored for it
 * (one a deep reorg took away is broadcast again and followed anew), or one that does nothing. With
 * nothing waiting, the cached nonce is forgotten.
 */
async function healNonceGap(prisma: Prisma, relayer: Relayer, open: OpenTx[], o: TrackOptions, logger: Logger): Promise<void> {
  const waiting = open.filter((t) => t.status === "SENT");
  if (waiting.length === 0) {
    // Nothing waits: the next signature asks the node for the nonce (one call then, none per idle round),
    // so a cached nonce a reorg left ahead of the chain can open no gap.
    relayer.resetNonce();
    return;
  }
  const lowest = waiting[0]!.nonce;
  const mined = await relayer.minedNonce();
  if (mined >= lowest) return;
  // A transaction just sent may not be in the node's count yet: only a gap that lasts is one.
  if (o.now().getTime() - waiting[0]!.sentAt.getTime() < o.bumpAfterMs) return;
  logger.warn({ from: mined, to: lowest - 1 }, "nonce gap below the relayer's waiting transactions; filling it");
  for (let nonce = mined; nonce < lowest; nonce++) {
    const stored = await prisma.relayerTransaction.findFirst({
      where: { chainId: relayer.chain.chainId, nonce, status: { in: ["MINED", "CONFIRMED"] } },
      orderBy: { createdAt: "desc" },
    });
    if (stored) {
      // Taken away by a reorg deeper than its confirmations: the very same transaction again.
      await reopenRelayerTx(prisma, stored.id, o.now());
      await broadcast(prisma, relayer, stored.id, stored.rawTx);
      continue;
    }
    const filler = await relayer.fill(nonce);
    const id = await storeNonceFiller(prisma, { chainId: relayer.chain.chainId, nonce, raw: filler.raw, hash: filler.hash });
    await broadcast(prisma, relayer, id, filler.raw);
  }
}

/** The receipt of whichever version of a transaction was mined, or null. */
async function minedVersion(relayer: Relayer, hashes: string[]): Promise<TransactionReceipt | null> {
  const receipts = await Promise.all(hashes.map((h) => relayer.receipt(h)));
  return receipts.find((r) => r !== null) ?? null;
}

/**
 * Broadcasts again, in nonce order, every transaction a previous holder of the chain stored but may
 * not have broadcast (it may have died in between), so new ones do not wait behind a nonce gap.
 */
export async function resendStored(prisma: Prisma, relayer: Relayer): Promise<void> {
  const rows = await prisma.relayerTransaction.findMany({
    where: { chainId: relayer.chain.chainId, status: "SENT" },
    orderBy: { nonce: "asc" },
    select: { rawTx: true },
  });
  // Failures are fine here: each transaction is re-sent or replaced when it is tracked.
  for (const { rawTx } of rows) await relayer.broadcast(rawTx).catch(() => false);
}
