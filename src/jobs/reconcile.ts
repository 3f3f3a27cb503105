// Reconciliation, the chain side (domain/reconcile.ts says what is compared): the USDC balance of every
// address in scope at the confirmed block, read through Multicall3, 500 balances to a call (with the stray
// tokens and native balances in the same calls), and the headers of the blocks holding recent
// confirmed transfers, at the confirmed block only while it is still the chain's (the block's hash,
// before and after reading). `stablegate reconcile` runs it read-only while the service runs; the
// worker runs it every RECONCILE_INTERVAL_MS, and at once for each just-picked address, and acts on it:
// when an address holds more than the ledger knows, the transfers into it since its charge was made
// are looked for (eth_getLogs on that address alone) and recorded like any the indexer reads; what
// still does not add up needs review (and the metric, and an error line).
import { type Block, type TransactionReceipt, zeroPadValue } from "ethers";
import type { Logger } from "pino";
import { type BalanceQuery, type ReadCount, readBalances } from "../chain/balances.js";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, isLogRangeError, withRpcRetry } from "../chain/rpc.js";
import type { Prisma } from "../db/client.js";
import { matchTransfers, recordSeenTransfers } from "../domain/chain-transfers.js";
import type { ChangeSettings } from "../domain/charges/settings.js";
import {
  balanceDifferences,
  type Difference,
  missingTransfer,
  reconcileInputs,
  recordReconciliation,
  settlementWallets,
  type StrayAsset,
  type UnknownDeposit,
  uncheckedClones,
  unknownAddresses,
} from "../domain/reconcile.js";
import type { ProcessMetrics } from "../lib/process-metrics.js";
import { blockFacts, factsOf, parseLogs, TRANSFER_TOPIC } from "./chain-logs.js";
import { MAX_RANGE } from "./range-size.js";
import { blockBefore } from "./start-block.js";

/** What one reconciliation of a chain found, and what it cost. */
export interface ReconcileResult {
  chainId: number;
  /** The confirmed block compared at (null: the chain is not indexed yet). */
  block: bigint | null;
  /**
   * Why nothing was compared although the chain is indexed: a reorg under the confirmed block not
   * caught up with yet, or a node that has not reached that block (a lagging endpoint).
   */
  skipped: string | null;
  /** Addresses compared, and confirmed transfers whose block was checked. */
  checked: number;
  transfersChecked: number;
  differences: Difference[];
  strays: StrayAsset[];
  /** JSON-RPC requests made. */
  requests: number;
  seconds: number;
  /** The charges compared (their stray assets are replaced by what was found). */
  chargeIds: string[];
}

/** Blocks back from the confirmed one whose confirmed transfers are checked against the chain's headers. */
export function recentWindow(chain: { confirmations: number }): number {
  return Math.max(256, chain.confirmations * 4);
}

/** Compares `chain`'s ledger with the chain (read-only); `only` narrows it to those charges' addresses. */
export async function reconcileChain(prisma: Prisma, rpc: ChainRpc, chain: EnabledChain, now = new Date(), only?: readonly string[]): Promise<ReconcileResult> {
  return (await compare(prisma, rpc, chain, now, only)).result;
}

/**
 * `reconcileChain`, with the addresses that hold more than the ledger knows and when their charges
 * were made (where their transfers can be looked for).
 */
async function compare(
  prisma: Prisma,
  rpc: ChainRpc,
  chain: EnabledChain,
  now: Date,
  only?: readonly string[],
): Promise<{ result: ReconcileResult; more: { chargeId: string; address: string; since: Date }[] }> {
  const started = performance.now();
  const count: ReadCount = { requests: 0 };
  const { block, blockHash, targets, recent } = await reconcileInputs(prisma, chain, recentWindow(chain), now, only);
  const result: ReconcileResult = {
    chainId: chain.chainId,
    block,
    skipped: null,
    checked: targets.length,
    transfersChecked: recent.length,
    differences: [],
    strays: [],
    requests: 0,
    seconds: 0,
    chargeIds: targets.map((t) => t.chargeId),
  };
  const more: { chargeId: string; address: string; since: Date }[] = [];
  const done = () => {
    result.requests = count.requests;
    result.seconds = (performance.now() - started) / 1000;
    return { result, more };
  };
  if (block === null || (targets.length === 0 && recent.length === 0)) return done();
  // The ledger is comparable only with the block it was confirmed at: after a reorg the node's block
  // of that number is another one until the indexer has rolled back (checked again after reading).
  // A node without the block at all is behind (one endpoint lagging the others), not reorganised:
  // nothing read from it can be compared, and the next pass will.
  const stands = async (): Promise<string | null> => {
    if (blockHash === null) return null;
    count.requests++;
    const found = await withRpcRetry(() => rpc.getBlock(block));
    if (!found) return `the node has not reached block ${block} yet (a lagging endpoint)`;
    return found.hash === blockHash ? null : `block ${block} is no longer the chain's: a reorg the indexer has not caught up with yet`;
  };
  const skip = (reason: string) => {
    result.skipped = reason;
    result.differences = [];
    result.strays = [];
    result.chargeIds = [];
    more.length = 0;
    return done();
  };
  const before = await stands();
  if (before) return skip(before);
  if (targets.length > 0) {
    const tokens = [chain.usdc, ...chain.watchTokens, "native"];
    const queries: BalanceQuery[] = targets.flatMap((t) => tokens.map((token) => ({ token, holder: t.address })));
    const balances = await readBalances(rpc, queries, block, chain.multicall3, count);
    const usdc = targets.map((_, i) => balances[i * tokens.length]!);
    result.differences.push(...balanceDifferences(chain.chainId, targets, usdc));
    targets.forEach((t, i) => usdc[i] !== null && usdc[i]! > t.expected && more.push(t));
    targets.forEach((t, i) =>
      tokens.slice(1).forEach((token, j) => {
        const amount = balances[i * tokens.length + 1 + j];
        if (amount) result.strays.push({ chargeId: t.chargeId, token, amount });
      }),
    );
  }
  if (recent.length > 0) {
    const numbers = [...new Set(recent.map((t) => t.blockNumber))];
    count.requests += numbers.length;
    const headers = await withRpcRetry(() => Promise.all(numbers.map((n) => rpc.getBlock(n))));
    const canonical = new Map(numbers.map((n, i) => [n, headers[i]?.hash ?? null]));
    // One receipt per transaction, and one difference per charge and transaction: a payout's transfer
    // to the wallet and its fee are one missing transaction, not two.
    const receipts = new Map<string, TransactionReceipt | null>();
    const listed = new Set<string>();
    for (const t of recent.filter((r) => canonical.get(r.blockNumber) !== r.blockHash)) {
      if (listed.has(`${t.chargeId} ${t.txHash}`)) continue;
      if (!receipts.has(t.txHash)) {
        count.requests++;
        receipts.set(t.txHash, await withRpcRetry(() => rpc.getTransactionReceipt(t.txHash)));
      }
      const receipt = receipts.get(t.txHash);
      // Re-included elsewhere is the same transfer (the indexer moves it when it reads that block).
      if (receipt && receipt.status === 1 && factsOf(receipt, chain.usdc, chain.subscriptions).has(t.factKey)) continue;
      listed.add(`${t.chargeId} ${t.txHash}`);
      result.differences.push(missingTransfer(chain.chainId, t));
    }
  }
  const after = await stands();
  return after ? skip(after) : done();
}

/**
 * Reconciles `chain` and acts on it: an address holding more than the ledger knows has its transfers
 * looked for since its charge was made (an RPC may have answered without them; money may have come
 * before anyone watched) and recorded like any the indexer reads, to be confirmed and counted; what
 * still differs needs review, is logged and (for a whole chain, not `only` some charges) counted in
 * the metric. The stray assets found are stored on the charges.
 */
export async function runReconciliation(
  prisma: Prisma,
  rpc: ChainRpc,
  chain: EnabledChain,
  settings: ChangeSettings,
  logger: Logger,
  options: { metrics?: Pick<ProcessMetrics, "reconcileDifferences">; only?: readonly string[] } = {},
  now = new Date(),
): Promise<ReconcileResult> {
  const { result, more } = await compare(prisma, rpc, chain, now, options.only);
  // Info, not a warning: both reasons pass by themselves (the indexer rolls back; the node catches up) and the next pass compares.
  if (result.skipped) logger.info({ block: result.block }, `reconciliation skipped: ${result.skipped}`);
  if (result.block === null || result.skipped) return result;
  const explained = new Set<string>();
  for (const target of more) {
    const found = await backfill(prisma, rpc, chain, target, result.block);
    if (found === 0) continue;
    explained.add(target.chargeId);
    logger.warn(
      { chargeId: target.chargeId, address: target.address, found },
      "transfers into this address the indexer never read: recorded now, counted once confirmed",
    );
  }
  result.differences = result.differences.filter((d) => !explained.has(d.chargeId));
  const flagged = await recordReconciliation(prisma, chain.chainId, result.chargeIds, result.differences, result.strays, settings, now);
  if (options.only === undefined) options.metrics?.reconcileDifferences.set({ chain_id: chain.chainId }, result.differences.length);
  for (const d of result.differences)
    logger.error({ chargeId: d.chargeId, kind: d.kind, txHash: d.txHash, address: d.address }, `reconciliation difference: ${d.message}`);
  if (options.only === undefined) {
    logger.info(
      {
        block: result.block,
        checked: result.checked,
        differences: result.differences.length,
        newlyFlagged: flagged.length,
        requests: result.requests,
        seconds: result.seconds,
      },
      "reconciled the ledger with the chain",
    );
  }
  return result;
}

/**
 * Reconciles the just-picked addresses of `chain` at once: money may have reached one before the
 * pick, even before anyone watched the chain.
 */
export async function checkPickedClones(
  prisma: Prisma,
  rpc: ChainRpc,
  chain: EnabledChain,
  settings: ChangeSettings,
  logger: Logger,
  now = new Date(),
): Promise<void> {
  const fresh = await uncheckedClones(prisma, chain.chainId);
  if (fresh.length > 0) await runReconciliation(prisma, rpc, chain, settings, logger, { only: fresh.map((c) => c.chargeId) }, now);
}

/** Records the transfers into `clone` since its charge was made up to `block`, read from the chain; returns how many were new. */
async function backfill(prisma: Prisma, rpc: ChainRpc, chain: EnabledChain, clone: { address: string; since: Date }, block: bigint): Promise<number> {
  const latest = blockFacts((await withRpcRetry(() => rpc.getBlock(block)))!);
  const from = (await blockBefore(rpc, clone.since, latest)).number;
  const logs = await logsInRange(rpc, chain.usdc, [TRANSFER_TOPIC, null, zeroPadValue(clone.address, 32)], from, block);
  const { transfers } = parseLogs(logs);
  const times = new Map<bigint, Date>();
  for (const n of new Set(transfers.map((t) => t.blockNumber))) {
    const b: Block | null = await withRpcRetry(() => rpc.getBlock(n));
    if (b) times.set(n, new Date(b.timestamp * 1000));
  }
  const observations = (await matchTransfers(prisma, chain, transfers, [])).map((o) => ({ ...o, blockTime: times.get(BigInt(o.blockNumber)) ?? null }));
  const before = await prisma.chainTransfer.count({ where: { chainId: chain.chainId, toAddress: clone.address } });
  await prisma.$transaction((tx) => recordSeenTransfers(tx, chain.chainId, observations, []));
  return (await prisma.chainTransfer.count({ where: { chainId: chain.chainId, toAddress: clone.address } })) - before;
}

/**
 * The payouts through our factory in blocks `from` to the confirmed block out of addresses no charge
 * has, to a merchant's settlement wallet of the chain's mode (domain/reconcile.ts UnknownDeposit),
 * one per address. Read-only.
 */
export async function findUnknownDeposits(prisma: Prisma, rpc: ChainRpc, chain: EnabledChain, from: bigint): Promise<UnknownDeposit[]> {
  const wallets = await settlementWallets(prisma, !chain.testnet);
  const to = BigInt(await withRpcRetry(() => rpc.getBlockNumber())) - BigInt(chain.confirmations) + 1n;
  if (wallets.size === 0 || to < from) return [];
  const logs = await logsInRange(rpc, chain.usdc, [TRANSFER_TOPIC, null, [...wallets.keys()].map((w) => zeroPadValue(w, 32))], from, to);
  const { transfers } = parseLogs(logs);
  const unknown = await unknownAddresses(prisma, [...new Set(transfers.map((t) => t.from.toLowerCase()))]);
  const factories = new Set([chain.factory, chain.v1?.factory].filter((f) => f !== undefined).map((f) => f.toLowerCase()));
  const found = new Map<string, UnknownDeposit>();
  const sentTo = new Map<string, string | null>();
  for (const t of transfers.filter((t) => unknown.has(t.from.toLowerCase()))) {
    // Only a transaction to our factory pays a charge's address out: other senders are strangers.
    if (!sentTo.has(t.txHash)) sentTo.set(t.txHash, (await withRpcRetry(() => rpc.getTransaction(t.txHash)))?.to?.toLowerCase() ?? null);
    if (!factories.has(sentTo.get(t.txHash) ?? "")) continue;
    const address = t.from.toLowerCase();
    const d = found.get(address) ?? { chainId: chain.chainId, address, merchantId: wallets.get(t.to.toLowerCase())!, amount: 0n, txHashes: [] };
    d.amount += t.amount;
    if (!d.txHashes.includes(t.txHash)) d.txHashes.push(t.txHash);
    found.set(address, d);
  }
  return [...found.values()];
}

/** The logs of `address` with `topics` in blocks `from` to `to`, in ranges the node accepts. */
async function logsInRange(rpc: ChainRpc, address: string, topics: (string | string[] | null)[], from: bigint, to: bigint) {
  let range = MAX_RANGE;
  const logs = [];
  while (from <= to) {
    const end = from + range - 1n < to ? from + range - 1n : to;
    try {
      logs.push(...(await withRpcRetry(() => rpc.getLogs({ fromBlock: from, toBlock: end, address, topics }))));
      from = end + 1n;
    } catch (e) {
      if (!isLogRangeError(e) || range === 1n) throw e;
      range /= 2n;
    }
  }
  return logs;
}
