// The relayer's bookkeeping of what it sent (relayer_transactions): one row per transaction, whatever
// it is for, moving SENT → MINED → CONFIRMED, or to FAILED; a reorg sends a row back to SENT. The
// worker's loop (jobs/relayer-txs.ts) signs, broadcasts and reads receipts; these are its writes.
//
// Invariant: a transaction is stored, with what it is for claimed in the same database transaction,
// before it is broadcast; a stored one is only re-sent or replaced at the same nonce.
import type { Prisma } from "../db/client.js";
import type { Prisma as P, RelayerTxKind } from "../generated/prisma/client.js";
import { newId } from "./ids.js";

/** A transaction signed and not yet stored. */
export interface SignedRelayerTx {
  chainId: number;
  kind: RelayerTxKind;
  nonce: number;
  raw: string;
  hash: string;
}

/** What a transaction is for, marked in the database transaction that stores it; false when its work was taken. */
export type RelayerTxClaim = (tx: P.TransactionClient, txId: string) => Promise<boolean>;

/** The transactions of `chainId` still on their way, in nonce order. */
export function openRelayerTxs(prisma: Prisma, chainId: number) {
  return prisma.relayerTransaction.findMany({ where: { chainId, status: { in: ["SENT", "MINED"] } }, orderBy: { nonce: "asc" } });
}

/**
 * Stores `signed` with `claim`, in one database transaction: its id, or null when `claim` found its
 * work taken (nothing is stored).
 */
export async function storeRelayerTx(prisma: Prisma, signed: SignedRelayerTx, claim: RelayerTxClaim): Promise<string | null> {
  const id = newId("rtx");
  return prisma
    .$transaction(async (tx) => {
      await tx.relayerTransaction.create({ data: rowOf(id, signed) });
      if (!(await claim(tx, id))) throw new ClaimLost();
      return id;
    })
    .catch((e) => {
      if (e instanceof ClaimLost) return null;
      throw e;
    });
}

class ClaimLost extends Error {}

/** Stores a transaction that only fills a nonce gap (kind FILL, for nothing); returns its id. */
export async function storeNonceFiller(prisma: Prisma, signed: Omit<SignedRelayerTx, "kind">): Promise<string> {
  const id = newId("rtx");
  await prisma.relayerTransaction.create({ data: rowOf(id, { ...signed, kind: "FILL" }) });
  return id;
}

/** The outcome of a broadcast: null when the node took it, else why not (it is sent again on the next look). */
export async function recordBroadcast(prisma: Prisma, id: string, lastError: string | null): Promise<void> {
  await prisma.relayerTransaction.update({ where: { id }, data: { lastError } });
}

/** Mined with success in `block`: MINED until its confirmations. */
export async function markRelayerTxMined(prisma: Prisma, id: string, mined: { txHash: string; blockNumber: bigint; blockHash: string }): Promise<void> {
  await prisma.relayerTransaction.update({ where: { id }, data: { status: "MINED", ...mined, lastError: null } });
}

/** Has its confirmations and is still on the chain. */
export async function markRelayerTxConfirmed(prisma: Prisma, id: string): Promise<void> {
  await prisma.relayerTransaction.update({ where: { id }, data: { status: "CONFIRMED" } });
}

/** Will never do anything: reverted (`txHash`, the version mined), or its nonce went to another transaction. */
export async function markRelayerTxFailed(prisma: Prisma, id: string, failure: { lastError: string; txHash?: string }): Promise<void> {
  await prisma.relayerTransaction.update({ where: { id }, data: { status: "FAILED", ...failure } });
}

/** Its block was reorganised away: SENT again, to be broadcast again (`sentAt`: counted as sent now). */
export async function reopenRelayerTx(prisma: Prisma, id: string, sentAt?: Date): Promise<void> {
  await prisma.relayerTransaction.update({ where: { id }, data: { status: "SENT", txHash: null, blockNumber: null, blockHash: null, sentAt } });
}

/** Replaced with higher fees at the same nonce: the new version is the one re-sent, every version's hash is looked for. */
export async function recordReplacement(prisma: Prisma, id: string, replacement: { raw: string; hash: string }, now: Date): Promise<void> {
  await prisma.relayerTransaction.update({
    where: { id },
    data: { rawTx: replacement.raw, txHashes: { push: replacement.hash }, bumps: { increment: 1 }, sentAt: now },
  });
}

/** Late but at the chain's fee ceiling: it waits as it is, counted as sent now. */
export async function recordWaitAtCeiling(prisma: Prisma, id: string, now: Date): Promise<void> {
  await prisma.relayerTransaction.update({ where: { id }, data: { sentAt: now } });
}

function rowOf(id: string, s: SignedRelayerTx): P.RelayerTransactionUncheckedCreateInput {
  return { id, chainId: s.chainId, kind: s.kind, nonce: s.nonce, rawTx: s.raw, txHashes: [s.hash] };
}
