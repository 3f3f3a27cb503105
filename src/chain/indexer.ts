// The indexer: follows a chain's head and records every USDC Transfer to one of our clones as a SEEN
// payment. It reads all USDC Transfers of a block range with one eth_getLogs and matches recipients
// against the clones in the database, so its RPC calls per block do not depend on how many charges
// are open: the latest block, the logs, and the headers of any blocks between.
//
// Invariants:
// - the cursor moves only in a transaction that also stores the range's payments and block hashes,
//   so a crash re-reads a range (payments are unique per chain, tx hash and log index) and never
//   skips one;
// - every stored block's parent is the block stored below it: a new block whose parent hash is not
//   our cursor's hash is a reorg, and we walk back to the last block the node still has, deleting the
//   SEEN payments above it (CONFIRMED ones are beyond the chain's confirmations and are kept);
// - logs are used only if their block hashes are the headers read with them (one consistent view);
// - the first run starts no later than the first charge that picked the chain, so a payment made
//   before any worker ran is still found.
import { type Block, getAddress, id, type JsonRpcProvider, type Log } from "ethers";
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { newId } from "../domain/ids.js";
import type { EnabledChain } from "./chains.js";
import { withRpcRetry } from "./relayer.js";

const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");

/** Most blocks read in one step (one eth_getLogs); a worker far behind catches up step by step. */
const MAX_BLOCKS = 100n;

/** Where one step left the indexer. */
export interface IndexStep {
  /** The last block indexed: the tip confirmations are counted from. */
  tip: bigint;
  /** True when the node's head is further than this step reached. */
  behind: boolean;
}

interface Cursor {
  blockNumber: bigint;
  blockHash: string;
}

/** Reads the next range of blocks of `chain` and records the payments to clones in it. */
export async function indexStep(prisma: Prisma, provider: JsonRpcProvider, chain: EnabledChain, logger: Logger): Promise<IndexStep> {
  // Enough recent hashes to find where any reorg the confirmations can absorb forked.
  const keepBlocks = Math.max(128, chain.confirmations * 2);
  const cursor = await prisma.chainCursor.findUnique({ where: { chainId: chain.chainId } });
  const latest = await withRpcRetry(() => provider.getBlock("latest"));
  if (!latest) throw new Error("the node returned no latest block");

  if (!cursor) {
    const start = await startBlock(prisma, provider, chain.chainId, latest);
    await prisma.$transaction([
      prisma.chainCursor.create({ data: { chainId: chain.chainId, blockNumber: BigInt(start.number), blockHash: start.hash! } }),
      prisma.chainBlock.create({ data: blockRow(chain.chainId, start) }),
    ]);
    logger.info({ block: start.number, head: latest.number }, "indexer started");
    return { tip: BigInt(start.number), behind: start.number < latest.number };
  }

  const head = BigInt(latest.number);
  if (head <= cursor.blockNumber) {
    if (head === cursor.blockNumber && latest.hash === cursor.blockHash) return idle(cursor);
    // The node's chain is now shorter than ours, or has another block at our height.
    return rollBack(prisma, provider, chain, cursor, logger);
  }

  const from = cursor.blockNumber + 1n;
  const to = head - cursor.blockNumber > MAX_BLOCKS ? cursor.blockNumber + MAX_BLOCKS : head;
  const numbers: bigint[] = [];
  for (let n = from; n <= to; n++) numbers.push(n);
  // One round trip: ethers batches calls made together into one JSON-RPC batch.
  const [headers, logs] = await Promise.all([
    Promise.all(numbers.map((n) => (n === head ? latest : withRpcRetry(() => provider.getBlock(n))))),
    withRpcRetry(() => provider.getLogs({ address: chain.usdc, topics: [TRANSFER_TOPIC], fromBlock: from, toBlock: to })),
  ]);

  const first = headers[0];
  if (!first) throw new Error(`the node returned no block ${from}`);
  if (first.parentHash !== cursor.blockHash) {
    return rollBack(prisma, provider, chain, cursor, logger);
  }
  const hashes = new Map<number, string>();
  headers.forEach((h, i) => {
    if (!h || (i > 0 && h.parentHash !== headers[i - 1]!.hash)) throw new Error(`the chain changed while blocks ${from}–${to} were read; reading again`);
    hashes.set(h.number, h.hash!);
  });
  for (const log of logs) {
    if (hashes.get(log.blockNumber) !== log.blockHash) throw new Error(`logs of block ${log.blockNumber} are from another fork; reading again`);
  }

  const payments = await matchPayments(prisma, chain.chainId, logs);
  const last = headers[headers.length - 1]!;
  await prisma.$transaction(async (tx) => {
    // Moves only from where this step started: a second indexer of the chain could never both advance.
    const moved = await tx.chainCursor.updateMany({
      where: { chainId: chain.chainId, blockNumber: cursor.blockNumber, blockHash: cursor.blockHash },
      data: { blockNumber: BigInt(last.number), blockHash: last.hash! },
    });
    if (moved.count !== 1) throw new Error("the cursor moved under this indexer (another one is running?)");
    await tx.chainBlock.createMany({ data: headers.map((h) => blockRow(chain.chainId, h!)), skipDuplicates: true });
    await tx.chainBlock.deleteMany({ where: { chainId: chain.chainId, number: { lt: BigInt(last.number - keepBlocks) } } });
    await tx.payment.createMany({ data: payments, skipDuplicates: true });
  });
  if (payments.length > 0) logger.info({ from, to, payments: payments.length }, "payments seen");
  return { tip: BigInt(last.number), behind: BigInt(last.number) < head };
}

/** Margin for the clocks of the database and the chain disagreeing. */
const CLOCK_SKEW_SECONDS = 300;

/**
 * Where a chain's first indexing starts: the head, or, when charges picked this chain before any
 * worker indexed it (an API ran without one), the last block before the first of them, found by
 * binary search on block timestamps (about log2(head) calls, once), so no payment is missed.
 */
async function startBlock(prisma: Prisma, provider: JsonRpcProvider, chainId: number, latest: Block): Promise<Block> {
  const [row] = await prisma.$queryRaw<{ first: Date | null }[]>`SELECT min(created_at) AS first FROM clone_deployments WHERE chain_id = ${chainId}`;
  if (!row?.first) return latest;
  const before = Math.floor(row.first.getTime() / 1000) - CLOCK_SKEW_SECONDS;
  if (latest.timestamp < before) return latest;
  const block = async (n: number) => {
    const b = await withRpcRetry(() => provider.getBlock(n));
    if (!b) throw new Error(`the node returned no block ${n}`);
    return b;
  };
  // Invariant: block `lo` is older than `before` (or is genesis), block `hi` is not.
  let lo = await block(0);
  let hi = latest.number;
  while (hi - lo.number > 1) {
    const mid = await block(Math.floor((lo.number + hi) / 2));
    if (mid.timestamp < before) lo = mid;
    else hi = mid.number;
  }
  return lo;
}

function idle(cursor: Cursor): IndexStep {
  return { tip: cursor.blockNumber, behind: false };
}

/** The payments among `logs`: transfers of a positive amount to a known clone of this chain. */
async function matchPayments(prisma: Prisma, chainId: number, logs: readonly Log[]) {
  const transfers = logs
    .filter((l) => l.topics.length === 3 && BigInt(l.data) > 0n)
    .map((l) => ({ log: l, from: topicAddress(l.topics[1]!), to: topicAddress(l.topics[2]!), amount: BigInt(l.data) }));
  if (transfers.length === 0) return [];
  const recipients = [...new Set(transfers.map((t) => t.to))];
  const clones = await prisma.$queryRaw<{ id: string; cloneAddress: string }[]>`
    SELECT id, clone_address AS "cloneAddress" FROM charges WHERE chain_id = ${chainId} AND clone_address = ANY(${recipients})`;
  const chargeOf = new Map(clones.map((c) => [c.cloneAddress, c.id]));
  return transfers
    .filter((t) => chargeOf.has(t.to))
    .map((t) => ({
      id: newId("pay"),
      chargeId: chargeOf.get(t.to)!,
      chainId,
      txHash: t.log.transactionHash,
      logIndex: t.log.index,
      blockNumber: BigInt(t.log.blockNumber),
      blockHash: t.log.blockHash,
      fromAddress: t.from,
      amount: t.amount,
    }));
}

/**
 * Walks back from the cursor to the newest stored block the node still has, then deletes what was
 * recorded above it: block hashes and SEEN payments.
 */
async function rollBack(prisma: Prisma, provider: JsonRpcProvider, chain: EnabledChain, cursor: Cursor, logger: Logger): Promise<IndexStep> {
  const stored = await prisma.chainBlock.findMany({ where: { chainId: chain.chainId }, orderBy: { number: "desc" } });
  let ancestor: { number: bigint; hash: string } | null = null;
  for (const block of stored) {
    const canonical = await withRpcRetry(() => provider.getBlock(block.number));
    if (canonical?.hash === block.hash) {
      ancestor = block;
      break;
    }
  }
  if (!ancestor) {
    // Deeper than every block we kept: trust the node below them and read the whole window again
    // (payments are unique per log, so nothing is recorded twice). If the node has no such block
    // (a devnet started over), resume at its head.
    const below = stored.length > 0 ? stored[stored.length - 1]!.number - 1n : cursor.blockNumber;
    const base = (below >= 0n && (await withRpcRetry(() => provider.getBlock(below)))) || (await withRpcRetry(() => provider.getBlock("latest")));
    ancestor = { number: BigInt(base!.number), hash: base!.hash! };
    logger.error({ kept: stored.length, resumeAt: base!.number }, "reorg deeper than the stored blocks; indexing again from below them");
  }
  const confirmedLost = await prisma.$transaction(async (tx) => {
    const above = { chainId: chain.chainId, blockNumber: { gt: ancestor.number } };
    await tx.payment.deleteMany({ where: { ...above, status: "SEEN" } });
    await tx.chainBlock.deleteMany({ where: { chainId: chain.chainId, number: { gt: ancestor.number } } });
    await tx.chainCursor.update({ where: { chainId: chain.chainId }, data: { blockNumber: ancestor.number, blockHash: ancestor.hash } });
    return tx.payment.count({ where: { ...above, status: "CONFIRMED" } });
  });
  const depth = Number(cursor.blockNumber - ancestor.number);
  logger.warn({ from: cursor.blockNumber, to: ancestor.number, depth }, "chain reorganised; unconfirmed payments above the fork rolled back");
  // Deeper than the confirmations: nothing to undo safely (the money may already be flushed).
  if (confirmedLost > 0) logger.error({ payments: confirmedLost }, "a reorg removed confirmed payments; raise this chain's confirmations");
  return { tip: ancestor.number, behind: true };
}

function blockRow(chainId: number, b: Block) {
  return { chainId, number: BigInt(b.number), hash: b.hash!, parentHash: b.parentHash };
}

function topicAddress(topic: string): string {
  return getAddress(`0x${topic.slice(26)}`);
}
