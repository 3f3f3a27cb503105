// Where the indexer is on each chain (chain_cursors) and the block hashes it keeps near the head to
// find a fork (chain_blocks). The cursor is the chain's clock: its confirmed block and time decide which
// charges expire (domain/charges/expire.ts), so moving it back on a reorg is a decision of the domain, taken
// here in one transaction with what the reorg makes the ledger forget (domain/chain-transfers.ts).
//
// Invariants:
// - the cursor moves forward only in the transaction that stores the range's transfers, block hashes
//   and revokes, and only from where the indexer read it: a second indexer of the chain can never
//   advance it too (the range is refused, nothing of it is stored);
// - a rollback deletes the blocks above the fork, moves the cursor and the confirmed clock down to it,
//   and records the re-checks of what was confirmed above it, all in one transaction.
import type { Prisma } from "../db/client.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import { forgetSeenAbove, type Observation, recordSeenTransfers, type SeenAuthorizationUse } from "./chain-transfers.js";
import { applyRevokes, type SeenRevoke } from "./subscription-facts.js";
import type { SubscriptionSettings } from "./subscriptions.js";

/** A block as the indexer keeps it: what finding a fork and dating a transfer need. */
export interface ChainBlockFacts {
  number: bigint;
  hash: string;
  parentHash: string;
  timestamp: Date;
}

/** Where the indexer stands on a chain. */
export interface ChainCursorAt {
  blockNumber: bigint;
  blockHash: string;
}

/** What one range of blocks held for us, recorded with the cursor's move over it. */
export interface IndexedRange {
  /** The headers read (the range's last is where the cursor moves). */
  headers: readonly ChainBlockFacts[];
  /** The node's head when the range was read. */
  head: bigint;
  /** Blocks below this number are forgotten: no reorg the confirmations absorb reaches them. */
  keepFrom: bigint;
  observations: Observation[];
  uses: readonly SeenAuthorizationUse[];
  cancels: readonly SeenAuthorizationUse[];
  revokes: readonly SeenRevoke[];
}

/** The indexer's cursor on `chainId`, or null before its first run. */
export function chainCursorOf(prisma: Prisma, chainId: number) {
  return prisma.chainCursor.findUnique({ where: { chainId } });
}

/** The block hashes kept for `chainId`, newest first: where a fork is looked for. */
export function storedChainBlocks(prisma: Prisma, chainId: number) {
  return prisma.chainBlock.findMany({ where: { chainId }, orderBy: { number: "desc" } });
}

/** A chain's first indexing: its cursor at `start`, and `start` as the first kept block, together. */
export async function startChainCursor(prisma: Prisma, chainId: number, start: ChainBlockFacts, head: bigint): Promise<void> {
  await prisma.$transaction([
    prisma.chainCursor.create({ data: { chainId, blockNumber: start.number, blockHash: start.hash, headBlock: head, blockTime: start.timestamp } }),
    prisma.chainBlock.create({ data: blockRow(chainId, start) }),
  ]);
}

/**
 * Records a range read from `from` (the cursor as the indexer read it): moves the cursor to the range's
 * last block, keeps its block hashes, and records its transfers, authorization uses and cancellations
 * and its subscriptions' revokes, in one transaction. Throws, storing nothing, when the cursor moved
 * under the caller (another indexer of the chain is running).
 */
export async function recordIndexedRange(
  prisma: Prisma,
  chainId: number,
  from: ChainCursorAt,
  range: IndexedRange,
  settings: SubscriptionSettings,
  now: Date,
): Promise<void> {
  const last = range.headers[range.headers.length - 1]!;
  await prisma.$transaction(async (tx) => {
    const moved = await tx.chainCursor.updateMany({
      where: { chainId, blockNumber: from.blockNumber, blockHash: from.blockHash },
      data: { blockNumber: last.number, blockHash: last.hash, headBlock: range.head, blockTime: last.timestamp },
    });
    if (moved.count !== 1) throw new Error("the cursor moved under this indexer (another one is running?)");
    await tx.chainBlock.createMany({ data: range.headers.map((h) => blockRow(chainId, h)), skipDuplicates: true });
    await tx.chainBlock.deleteMany({ where: { chainId, number: { lt: range.keepFrom } } });
    await recordSeenTransfers(tx, chainId, range.observations, range.uses, range.cancels);
    await applyRevokes(tx, chainId, range.revokes, settings, now);
  });
}

/**
 * Rolls `chainId` back to `fork` (the newest block both we and the node have): forgets the blocks
 * above it, moves the cursor and the confirmed clock down to it, and forgets what was seen above it,
 * recording the confirmed transfers there as re-checks (domain/chain-transfers.ts `forgetSeenAbove`),
 * in one transaction. Returns how many re-checks were added.
 */
export async function rollBackChainCursor(
  prisma: Prisma,
  chainId: number,
  fork: { number: bigint; hash: string; timestamp: Date | null },
  reorg: { depth: number; reason: string },
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    await tx.chainBlock.deleteMany({ where: { chainId, number: { gt: fork.number } } });
    await tx.chainCursor.update({ where: { chainId }, data: { blockNumber: fork.number, blockHash: fork.hash, blockTime: fork.timestamp } });
    // The confirmed clock cannot stand above the fork either.
    await tx.chainCursor.updateMany({
      where: { chainId, confirmedBlock: { gt: fork.number } },
      data: { confirmedBlock: fork.number, confirmedTime: fork.timestamp },
    });
    return forgetSeenAbove(tx, chainId, fork.number, reorg);
  });
}

function blockRow(chainId: number, b: ChainBlockFacts): P.ChainBlockCreateManyInput {
  return { chainId, number: b.number, hash: b.hash, parentHash: b.parentHash, timestamp: b.timestamp };
}
