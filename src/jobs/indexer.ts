// The indexer: follows a chain's head and records what the chain did with our charges' money,
// whoever did it: every USDC Transfer into or out of a charge's address (payments; payouts and fees:
// anyone may call a clone's public functions), the transfers that pay refunds (from a settlement wallet
// to a refund's address: the merchant may send them by any means), and the EIP-3009 nonces USDC marks
// used (AuthorizationUsed) or their signers cancelled (AuthorizationCanceled), and SubscriptionsV1's
// pulls and revokes (domain/subscription-facts.ts). Each range of blocks costs one eth_getLogs and the
// headers it needs, in one batch (range-reader.ts, sized by range-size.ts); addresses are matched
// against the charges in the database, so the RPC calls per block do not grow with the number of open
// charges. What a range held is recorded by the domain (domain/chain-cursors.ts), reorgs are handled
// by reorgs.ts, and a first run starts where start-block.ts says. Block numbers are bigints throughout.
//
// Invariants:
// - the cursor moves only in a transaction that also stores the range's transfers and block hashes
//   and times, one range per transaction (never one across ranges); a crash re-reads a range
//   (transfers are recorded once per fact) and never skips one;
// - a node whose head is behind our cursor is lagging, not reorganised: nothing is rolled back, the
//   step waits, and the client prefers another endpoint for a while; except the local devnet when our
//   cursor's block is not on it at all: that devnet started over (a database restored into a fresh
//   DATA_DIR without its chain state), and is followed as a reorg below every stored block;
// - a reorg's re-checks are worked off before any block is read (reorgs.ts);
// - the first run starts no later than the oldest open charge of the chain's mode, so a payment made
//   before any worker ran is still found.
import type { Block } from "ethers";
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { type ChainBlockFacts, chainCursorOf, type ChainCursorAt, recordIndexedRange, startChainCursor } from "../domain/chain-cursors.js";
import type { ChangeSettings } from "../domain/charges/settings.js";
import { matchTransfers, type Observation, type SeenAuthorizationUse, type SeenTransfer } from "../domain/chain-transfers.js";
import { matchPulls, parseSubscriptionLogs, type SeenPull } from "../domain/subscription-facts.js";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, isLogRangeError, withRpcRetry } from "../chain/rpc.js";
import { blockFacts, parseLogs, sameAddress } from "./chain-logs.js";
import { type RangeRead, readDeep, readNear } from "./range-reader.js";
import { RangeSize } from "./range-size.js";
import { recheck, type ReorgContext, rollBack } from "./reorgs.js";
import { startBlock } from "./start-block.js";

/** Where one step left the indexer. */
export interface IndexStep {
  /** The last block indexed: the tip confirmations are counted from. */
  tip: bigint;
  /** True when the node's head is further than this step reached. */
  behind: boolean;
  /** True when the step rolled back a reorg (the relayer's nonce must be read again). */
  reorged?: boolean;
}

/** Follows one chain; keep one per chain runner (it remembers how large a range the provider takes). */
export class ChainIndexer {
  private readonly size: RangeSize;
  /** Enough recent hashes to find where any reorg the confirmations can absorb forked. */
  private readonly reorgWindow: bigint;
  private readonly reorgs: ReorgContext;

  constructor(
    private readonly prisma: Prisma,
    private readonly rpc: ChainRpc,
    private readonly chain: EnabledChain,
    private readonly logger: Logger,
    /** How a deep reorg's reversals are shaped and announced. */
    private readonly settings: ChangeSettings & { paymentBaseUrl: string },
  ) {
    this.size = new RangeSize(logger);
    this.reorgWindow = BigInt(Math.max(128, chain.confirmations * 2));
    this.reorgs = { prisma, rpc, chain, logger, settings };
  }

  /** Reads the next range of blocks and records the transfers of our charges' money in it. */
  async step(): Promise<IndexStep> {
    const { chain } = this;
    // A reorg's re-checks first: reading on before they are done would build on transfers that may be
    // gone. Those whose transaction waits in the mempool stay open and do not hold reading back: their
    // transfer is still CONFIRMED, so the same fact seen again in a new block is not recorded twice.
    await recheck(this.reorgs);
    const cursor = await chainCursorOf(this.prisma, chain.chainId);
    const latest = await withRpcRetry(() => this.rpc.getBlock("latest"));
    if (!latest) throw new Error("the node returned no latest block");
    if (!cursor) return this.begin(latest);

    const head = BigInt(latest.number);
    if (head < cursor.blockNumber) {
      if (chain.local && !(await withRpcRetry(() => this.rpc.getBlock(cursor.blockHash)))) return this.startedOver(cursor, head);
      // This endpoint has not caught up with what another one already showed us.
      this.rpc.lagging();
      this.logger.debug({ head, cursor: cursor.blockNumber }, "RPC endpoint is behind the indexer; waiting");
      return { tip: cursor.blockNumber, behind: false };
    }
    if (head === cursor.blockNumber) {
      if (latest.hash === cursor.blockHash) return { tip: cursor.blockNumber, behind: false };
      return this.rolledBack(cursor);
    }

    const from = cursor.blockNumber + 1n;
    const settled = head - this.reorgWindow;
    const deep = from <= settled;
    const to = this.size.end(from, deep ? settled : head, !deep);
    let read: RangeRead | "reorg";
    try {
      read = deep ? await readDeep(this.rpc, chain, from, to) : await readNear(this.rpc, chain, cursor, from, to, latest);
    } catch (e) {
      if (!isLogRangeError(e)) throw e;
      this.size.shrink(e, from, to);
      return { tip: cursor.blockNumber, behind: true };
    }
    if (read === "reorg") return this.rolledBack(cursor);
    this.size.grow();
    const last = await this.record(cursor, read, head);
    if (deep) this.progress(from, to, head);
    return { tip: last, behind: last < head };
  }

  /** Matches a range's logs to our charges and has the domain record them with the cursor's move; returns the range's last block. */
  private async record(cursor: ChainCursorAt, read: RangeRead, head: bigint): Promise<bigint> {
    const { chain } = this;
    const last = read.headers[read.headers.length - 1]!.number;
    const { transfers, uses, cancels } = parseLogs(read.logs.filter((l) => sameAddress(l.address, chain.usdc)));
    const { pulls, revokes } = parseSubscriptionLogs(read.logs.filter((l) => sameAddress(l.address, chain.subscriptions)));
    const times = new Map(read.headers.map((h) => [h.number, h.timestamp]));
    const observations = await this.match(transfers, uses, pulls, times);
    const range = { headers: read.headers, head, keepFrom: last - this.reorgWindow, observations, uses, cancels, revokes };
    await recordIndexedRange(this.prisma, chain.chainId, cursor, range, this.settings, new Date());
    if (observations.length > 0) this.logger.info({ from: cursor.blockNumber + 1n, to: last, transfers: observations.length }, "chain money seen");
    return last;
  }

  /**
   * The range's transfers that move our charges' money, with their blocks' times: known for the
   * headers read, and read now for the few other blocks that hold one (far from the head).
   */
  private async match(transfers: SeenTransfer[], uses: SeenAuthorizationUse[], pulls: SeenPull[], times: Map<bigint, Date>): Promise<Observation[]> {
    const observations = [
      ...(await matchTransfers(this.prisma, this.chain, transfers, uses)),
      ...(await matchPulls(this.prisma, this.chain.chainId, this.chain.subscriptions, pulls)),
    ];
    const missing = [...new Set(observations.map((o) => BigInt(o.blockNumber)).filter((n) => !times.has(n)))];
    const headers = await withRpcRetry(() => Promise.all(missing.map((n) => this.rpc.getBlock(n))));
    for (const h of headers) if (h) times.set(BigInt(h.number), new Date(h.timestamp * 1000));
    return observations.map((o) => ({ ...o, blockTime: times.get(BigInt(o.blockNumber)) ?? null }));
  }

  /** One line per range read while catching up: where it is, and how far the head still is. */
  private progress(from: bigint, to: bigint, head: bigint): void {
    const done = head - to <= this.reorgWindow;
    this.logger.info({ from, to, head, behind: head - to }, done ? "caught up with the chain" : "catching up with the chain");
  }

  /** A chain's first indexing: start where no payment can be missed (see startBlock). */
  private async begin(latest: Block): Promise<IndexStep> {
    const head: ChainBlockFacts = blockFacts(latest);
    const start = await startBlock(this.prisma, this.rpc, this.chain, head);
    await startChainCursor(this.prisma, this.chain.chainId, start, head.number);
    this.logger.info({ block: start.number, head: head.number }, "indexer started");
    return { tip: start.number, behind: start.number < head.number };
  }

  /**
   * The local devnet started over below our cursor (its chain state was not restored with the
   * database): what the ledger holds from the old devnet is not on this one. Said loudly once, then
   * handled as a reorg deeper than every stored block, which resumes on the new devnet.
   */
  private async startedOver(cursor: ChainCursorAt, head: bigint): Promise<IndexStep> {
    this.logger.error(
      { cursor: cursor.blockNumber, head },
      "the local devnet started over (its head is below the indexer's cursor and the cursor's block is not on it: a database restored without the devnet's state?); indexing the new devnet from its head, test payments seen only on the old devnet are checked against it",
    );
    return this.rolledBack(cursor);
  }

  /** Rolls a reorg back (reorgs.ts) and says so to the chain's runner. */
  private async rolledBack(cursor: ChainCursorAt): Promise<IndexStep> {
    return { tip: await rollBack(this.reorgs, cursor), behind: true, reorged: true };
  }
}
