// Reading one range of blocks: its logs (one eth_getLogs: USDC's and SubscriptionsV1's events, both
// addresses in one filter) and the headers it needs, in one batch. Two ways, by depth:
// - near the head every header of the range is read and linked to its parent and to the cursor, so a
//   reorg shows as a parent that is not our cursor;
// - further back (catching up after an outage) only the range's last header is read: those blocks
//   are beyond any reorg the confirmations absorb.
// Logs are used only if they come from the blocks read with them (same hashes, same batch, same
// endpoint); the RPC client has already checked every block and log against its request.
import type { Block, Log } from "ethers";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, withRpcRetry } from "../chain/rpc.js";
import type { ChainBlockFacts, ChainCursorAt } from "../domain/chain-cursors.js";
import { blockFacts, INDEXED_TOPICS } from "./chain-logs.js";

/** What one range of blocks holds for us. */
export interface RangeRead {
  /** The headers read: every block of the range near the head, the last one only further back. */
  headers: ChainBlockFacts[];
  /** USDC's and SubscriptionsV1's logs. */
  logs: Log[];
}

/** Near the head: every header of [from, to] and the range's logs in one batch, linked to the cursor; "reorg" when the first is not the cursor's child. */
export async function readNear(
  rpc: ChainRpc,
  chain: EnabledChain,
  cursor: ChainCursorAt,
  from: bigint,
  to: bigint,
  latest: Block,
): Promise<RangeRead | "reorg"> {
  const numbers: bigint[] = [];
  for (let n = from; n <= to; n++) numbers.push(n);
  const [read, logs] = await withRpcRetry(() =>
    Promise.all([Promise.all(numbers.map((n) => (n === BigInt(latest.number) ? latest : rpc.getBlock(n)))), rangeLogs(rpc, chain, from, to)]),
  );
  const headers: ChainBlockFacts[] = [];
  for (const [i, h] of read.entries()) {
    // A block the node cannot give although its head is past it: another endpoint's view, or a
    // node still importing it. Read again rather than index around a hole.
    if (!h) throw new Error(`the node has no block ${numbers[i]} below its head; reading again`);
    if (i > 0 && h.parentHash !== headers[i - 1]!.hash) throw new Error(`the chain changed while blocks ${from}–${to} were read; reading again`);
    headers.push(blockFacts(h));
  }
  if (headers[0]!.parentHash !== cursor.blockHash) return "reorg";
  return checked({ headers, logs });
}

/** Deep below the head: the range's logs and its last header, in one batch. */
export async function readDeep(rpc: ChainRpc, chain: EnabledChain, from: bigint, to: bigint): Promise<RangeRead> {
  const [last, logs] = await withRpcRetry(() => Promise.all([rpc.getBlock(to), rangeLogs(rpc, chain, from, to)]));
  if (!last) throw new Error(`the node has no block ${to} below its head; reading again`);
  return checked({ headers: [blockFacts(last)], logs });
}

/**
 * The one eth_getLogs of a range: USDC's Transfer, AuthorizationUsed and AuthorizationCanceled
 * events, and SubscriptionsV1's Pulled and Revoked (two addresses, one call).
 */
function rangeLogs(rpc: ChainRpc, chain: EnabledChain, from: bigint, to: bigint): Promise<Log[]> {
  return rpc.getLogs({ fromBlock: from, toBlock: to, address: [chain.usdc, chain.subscriptions], topics: [INDEXED_TOPICS] });
}

/** Every log of a block whose header was read must carry that header's hash: one consistent view. */
function checked(read: RangeRead): RangeRead {
  const hashes = new Map(read.headers.map((h) => [h.number, h.hash]));
  for (const log of read.logs) {
    const hash = hashes.get(BigInt(log.blockNumber));
    if (hash !== undefined && hash !== log.blockHash) throw new Error(`logs of block ${log.blockNumber} are from another fork; reading again`);
  }
  return read;
}
