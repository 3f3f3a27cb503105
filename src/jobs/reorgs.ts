// A chain's reorgs, as the indexer meets them: finding where the chain forked from what we stored,
// rolling back to it (domain/chain-cursors.ts: in one transaction with what the ledger forgets), and
// working off the re-checks a reorg deeper than the confirmations leaves.
//
// Invariants:
// - a rollback forgets what was seen above the fork; what was confirmed there is recorded in the
//   rollback's transaction as re-checks, which every step works off against the node's receipts
//   before it reads a block (and while the node will not answer for one, reads none): re-included, it
//   is the same transfer; gone, it is reversed in the ledger and its charge needs review
//   (domain/reversals.ts); still in the node's mempool, it waits (up to RECHECK_PENDING_MS) while
//   indexing goes on. An RPC failure or a crash in between loses no check, and what was checked before
//   a failure stays applied.
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, withRpcRetry } from "../chain/rpc.js";
import { type ChainCursorAt, rollBackChainCursor, storedChainBlocks } from "../domain/chain-cursors.js";
import type { ChangeSettings } from "../domain/charges/settings.js";
import { type PendingRecheck, pendingRechecks, type RecheckFinding, settleRechecks } from "../domain/reversals.js";
import { blockFacts, factsOf } from "./chain-logs.js";

/** Transactions whose receipts one step reads (and whose re-checks it applies) at a time. */
const RECHECK_CHUNK = 50;
/**
 * How long a re-check waits for its transaction while the node still holds it unmined (a reorg put
 * it back in the mempool) before the transfer counts as gone.
 */
export const RECHECK_PENDING_MS = 15 * 60_000;

/** What handling a chain's reorgs needs. */
export interface ReorgContext {
  prisma: Prisma;
  rpc: ChainRpc;
  chain: EnabledChain;
  logger: Logger;
  /** How a deep reorg's reversals are shaped and announced. */
  settings: ChangeSettings & { paymentBaseUrl: string };
}

/**
 * Walks back from the cursor to the newest stored block the node still has, then forgets what was
 * recorded above it: block hashes, and what was seen but not confirmed. What was confirmed above it
 * (a reorg deeper than the confirmations) is recorded, in the same transaction, to be checked
 * against the node's receipts (`recheck`), at once or by the next step. Returns the fork's block
 * number: the new cursor.
 */
export async function rollBack(c: ReorgContext, cursor: ChainCursorAt): Promise<bigint> {
  const { chain, logger } = c;
  const fork = await findFork(c, cursor);
  const depth = Number(cursor.blockNumber - fork.number);
  const reason = `a reorg ${depth} blocks deep (deeper than the confirmations) on chain ${chain.chainId}`;
  const rechecks = await rollBackChainCursor(c.prisma, chain.chainId, fork, { depth, reason });
  logger.warn(
    { from: cursor.blockNumber, to: fork.number, depth, rechecks },
    "chain reorganised; what was seen above the fork and not confirmed is forgotten, what was confirmed there is checked again",
  );
  // Checked at once when the node allows, else as the next step's first work; either way the caller
  // hears of the reorg (and reads the relayer's nonce again).
  await recheck(c).catch((e) => logger.warn({ err: (e as Error).message }, "the reorg's re-checks wait for the next step"));
  return fork.number;
}

/** The newest stored block the node still has; below every stored one when none is (see inside). */
async function findFork(c: ReorgContext, cursor: ChainCursorAt): Promise<{ number: bigint; hash: string; timestamp: Date | null }> {
  const stored = await storedChainBlocks(c.prisma, c.chain.chainId);
  for (const block of stored) {
    const canonical = await withRpcRetry(() => c.rpc.getBlock(block.number));
    if (canonical?.hash === block.hash) return block;
  }
  // Deeper than every block we kept: trust the node below them and read the whole window again
  // (transfers are recorded once per fact, so nothing is recorded twice). If the node has no such
  // block (a devnet started over), resume at its head.
  const below = stored.length > 0 ? stored[stored.length - 1]!.number - 1n : cursor.blockNumber;
  const base = (below >= 0n && (await withRpcRetry(() => c.rpc.getBlock(below)))) || (await withRpcRetry(() => c.rpc.getBlock("latest")));
  const fork = blockFacts(base!);
  c.logger.error({ kept: stored.length, resumeAt: fork.number }, "reorg deeper than the stored blocks; indexing again from below them");
  return fork;
}

/**
 * Works off the chain's open re-checks (a reorg deeper than the confirmations): each confirmed
 * transfer left above a fork is looked for in its transaction's receipt on the chain as it is now.
 * Re-included (at whatever log index), it is the same transfer, moved; gone, it is reversed and its
 * charge needs review. A transaction the node still holds unmined (a reorg puts the transactions of
 * the blocks it drops back in the mempool) is not gone yet: its re-check waits, without holding back
 * indexing, for RECHECK_PENDING_MS at most. Receipts are read and applied RECHECK_CHUNK transactions
 * at a time, so what the node answered is kept; a node that will not answer fails the step, and the
 * checks it left open are tried again by the next one, before any block is read.
 */
export async function recheck(c: ReorgContext): Promise<void> {
  const pending = await pendingRechecks(c.prisma, c.chain.chainId);
  if (pending.length === 0) return;
  const now = new Date();
  const byTx = new Map<string, PendingRecheck[]>();
  for (const r of pending) byTx.set(r.txHash, [...(byTx.get(r.txHash) ?? []), r]);
  const hashes = [...byTx.keys()];
  let settled = 0;
  let reincluded = 0;
  let waiting = 0;
  const reversed: string[] = [];
  for (let i = 0; i < hashes.length; i += RECHECK_CHUNK) {
    const chunk = hashes.slice(i, i + RECHECK_CHUNK);
    const answers = await Promise.allSettled(chunk.map((hash) => withRpcRetry(() => onChain(c, hash))));
    const findings: RecheckFinding[] = [];
    for (const [j, answer] of answers.entries()) {
      if (answer.status === "rejected") continue;
      for (const recheck of byTx.get(chunk[j]!)!) {
        const found = answer.value;
        if (found === "unmined" && now.getTime() - recheck.createdAt.getTime() < RECHECK_PENDING_MS) waiting++;
        else findings.push({ recheck, at: found === "unmined" || found === null ? null : (found.get(recheck.factKey)?.at(recheck.transferId) ?? null) });
      }
    }
    const done = await settleRechecks(c.prisma, c.settings, findings, now);
    settled += findings.length;
    reincluded += done.reincluded;
    reversed.push(...done.reversed.map((r) => r.id));
    const failed = answers.find((a) => a.status === "rejected");
    if (failed) {
      c.logger.error(
        { pending: pending.length, settled, err: (failed.reason as Error).message },
        "could not re-check the transfers a reorg left above its fork (the node did not give their receipts); indexing waits and tries again",
      );
      throw failed.reason;
    }
  }
  if (waiting > 0) c.logger.warn({ waiting }, "transactions a reorg took away are still in the node's mempool: their re-checks wait for them to be mined");
  if (settled === 0) return;
  c.logger.error(
    { rechecked: settled, reincluded, reversed: settled - reincluded, charges: reversed },
    "a reorg deeper than the confirmations moved confirmed transfers; re-included ones are kept, the others reversed (the charges need review); raise this chain's confirmations",
  );
}

/**
 * What the chain has of transaction `hash` now: its USDC transfers when it is mined and did not
 * revert, "unmined" while the node holds it without a receipt, null when it is gone.
 */
async function onChain(c: ReorgContext, hash: string): Promise<ReturnType<typeof factsOf> | "unmined" | null> {
  const receipt = await c.rpc.getTransactionReceipt(hash);
  if (receipt) return receipt.status === 1 ? factsOf(receipt, c.chain.usdc, c.chain.subscriptions) : null;
  return (await c.rpc.getTransaction(hash)) ? "unmined" : null;
}
