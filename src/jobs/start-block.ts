// Where a chain's first indexing starts, and the search on block timestamps it (and the reconciliation's
// backfill) rests on.
import type { Prisma } from "../db/client.js";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, withRpcRetry } from "../chain/rpc.js";
import type { ChainBlockFacts } from "../domain/chain-cursors.js";
import { blockFacts } from "./chain-logs.js";

/** Margin for the clocks of the database and the chain disagreeing. */
const CLOCK_SKEW_MS = 300_000;

/**
 * Where a chain's first indexing starts: the head, or, when charges of the chain's mode are open
 * (their addresses may be paid on this chain, picked or not), the last block before the oldest of
 * them, found by binary search on block timestamps (about log2(head) calls, once), so no payment is
 * missed.
 */
export async function startBlock(prisma: Prisma, rpc: ChainRpc, chain: EnabledChain, latest: ChainBlockFacts): Promise<ChainBlockFacts> {
  const [row] = await prisma.$queryRaw<{ first: Date | null }[]>`
    SELECT min(created_at) AS first FROM charges WHERE status = 'PENDING' AND livemode = ${!chain.testnet}`;
  return row?.first ? blockBefore(rpc, row.first, latest) : latest;
}

/**
 * The last block before `time` (less a margin for the database's and the chain's clocks), or
 * `latest` when the chain has not reached it: a binary search on block timestamps, about log2(head) calls.
 */
export async function blockBefore(rpc: ChainRpc, time: Date, latest: ChainBlockFacts): Promise<ChainBlockFacts> {
  // Whole seconds, as block timestamps are.
  const before = Math.floor(time.getTime() / 1000) * 1000 - CLOCK_SKEW_MS;
  if (latest.timestamp.getTime() < before) return latest;
  const block = async (n: bigint) => {
    const b = await withRpcRetry(() => rpc.getBlock(n));
    if (!b) throw new Error(`the node returned no block ${n}`);
    return blockFacts(b);
  };
  // Invariant: block `lo` is older than `before` (or is genesis), block `hi` is not.
  let lo = await block(0n);
  let hi = latest.number;
  while (hi - lo.number > 1n) {
    const mid = await block((lo.number + hi) / 2n);
    if (mid.timestamp.getTime() < before) lo = mid;
    else hi = mid.number;
  }
  return lo;
}
