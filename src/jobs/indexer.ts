// The indexer: follows a chain's head and records what the chain did with our charges' money,
// whoever did it: every USDC Transfer into or out of a charge's address (payments; payouts and fees:
// anyone may call a clone's public functions), the transfers that pay refunds (from a settlement wallet
// to a refund's address: the merchant may send them by any means), and the EIP-3009 nonces USDC marks
// used (AuthorizationUsed) or their signers cancelled (AuthorizationCanceled), and SubscriptionsV1's
// pulls and revokes (domain/subscription-facts.ts). Each range of blocks costs one eth_getLogs
// (USDC's and SubscriptionsV1's events, both addresses in one filter) and the headers it needs, in one
// batch; addresses are matched against the charges in the database, so the RPC calls per block do
// not grow with the number of open charges.
//
// Two ways of reading, by depth:
// - near the head (the last `reorgWindow` blocks) every header of a range is read and linked to its
//   parent, so a reorg shows as a parent that is not our cursor, and is rolled back;
// - further back (catching up after an outage), ranges of up to MAX_RANGE blocks are read with the
//   range's last header only (and the headers of blocks holding our transfers, for their times): those
//   blocks are beyond any reorg the confirmations absorb.
// A range a provider refuses is cut to the limit the provider states (and never grown past it), or
// halved when it states none (too many logs: a denser stretch of chain), growing back after a run
// of successes.
//
// Invariants:
// - the cursor moves only in a transaction that also stores the range's transfers and block hashes
//   and times, one range per transaction (never one across ranges); a crash re-reads a range
//   (transfers are recorded once per fact) and never skips one;
// - logs are used only if they come from the blocks read with them (same hashes, same batch, same
//   endpoint), and the RPC client has already checked every block and log against its request;
// - a node whose head is behind our cursor is lagging, not reorganised: nothing is rolled back, the
//   step waits, and the client prefers another endpoint for a while; except the local devnet when our
//   cursor's block is not on it at all: that devnet started over (a database restored into a fresh
//   DATA_DIR without its chain state), and is followed as a reorg below every stored block;
// - a rollback forgets what was seen above the fork; what was confirmed there (a reorg deeper than
//   the confirmations) is recorded in the rollback's transaction as re-checks, which every step works
//   off against the node's receipts before it reads a block (and while the node will not answer for
//   one, reads none): re-included, it is the same transfer; gone, it is reversed in the ledger and
//   its charge needs review (domain/reversals.ts); still in the node's mempool, it waits (up to
//   RECHECK_PENDING_MS) while indexing goes on. An RPC failure or a crash in between loses no check,
//   and what was checked before a failure stays applied;
// - the first run starts no later than the oldest open charge of the chain's mode, so a payment made
//   before any worker ran is still found.
import { type Block, getAddress, id, type Log, type TransactionReceipt } from "ethers";
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import type { ChangeSettings } from "../domain/charges.js";
import {
  factKeys,
  forgetSeenAbove,
  matchTransfers,
  type Observation,
  recordSeenTransfers,
  type SeenAuthorizationUse,
  type SeenTransfer,
} from "../domain/chain-transfers.js";
import { applyRevokes, matchPulls, parseSubscriptionLogs, PULLED_TOPIC, pullFactsOf, REVOKED_TOPIC, type SeenPull } from "../domain/subscription-facts.js";
import { type PendingRecheck, pendingRechecks, type RecheckFinding, type Relocation, settleRechecks } from "../domain/reversals.js";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, isLogRangeError, nodeErrorOf, withRpcRetry } from "../chain/rpc.js";

/** USDC's Transfer event. */
export const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");
const AUTHORIZATION_USED_TOPIC = id("AuthorizationUsed(address,bytes32)");
/** USDC's AuthorizationCanceled: the signer spent the nonce on nothing (cancelAuthorization). */
const AUTHORIZATION_CANCELED_TOPIC = id("AuthorizationCanceled(address,bytes32)");

/** Most blocks per eth_getLogs: the tightest common hosted-provider limit (2,000 blocks). */
export const MAX_RANGE = 2_000;
/** Most blocks per step near the head, where every header is read. */
const NEAR_HEAD_RANGE = 100;
/** Successful steps at a reduced range before it is doubled again. */
const GROW_AFTER = 20;
/** Transactions whose receipts one step reads (and whose re-checks it applies) at a time. */
const RECHECK_CHUNK = 50;
/**
 * How long a re-check waits for its transaction while the node still holds it unmined (a reorg put
 * it back in the mempool) before the transfer counts as gone.
 */
export const RECHECK_PENDING_MS = 15 * 60_000;

/** Where one step left the indexer. */
export interface IndexStep {
  /** The last block indexed: the tip confirmations are counted from. */
  tip: bigint;
  /** True when the node's head is further than this step reached. */
  behind: boolean;
  /** True when the step rolled back a reorg (the relayer's nonce must be read again). */
  reorged?: boolean;
}

interface Cursor {
  blockNumber: bigint;
  blockHash: string;
}

/** What one range of blocks holds for us. */
interface RangeRead {
  /** The headers read: every block of the range near the head, the last one only further back. */
  headers: Block[];
  /** USDC's Transfer and AuthorizationUsed logs. */
  logs: Log[];
}

/** Follows one chain; keep one per chain runner (it remembers how large a range the provider takes). */
export class ChainIndexer {
  private range = MAX_RANGE;
  /** The most blocks the provider said it takes (its limit, or the range it suggested): never grown past. */
  private ceiling = MAX_RANGE;
  private successes = 0;
  /** Enough recent hashes to find where any reorg the confirmations can absorb forked. */
  private readonly reorgWindow: number;

  constructor(
    private readonly prisma: Prisma,
    private readonly rpc: ChainRpc,
    private readonly chain: EnabledChain,
    private readonly logger: Logger,
    /** How a deep reorg's reversals are shaped and announced. */
    private readonly settings: ChangeSettings & { paymentBaseUrl: string },
  ) {
    this.reorgWindow = Math.max(128, chain.confirmations * 2);
  }

  /** Reads the next range of blocks and records the transfers of our charges' money in it. */
  async step(): Promise<IndexStep> {
    const { prisma, chain } = this;
    // A reorg's re-checks first: reading on before they are done would build on transfers that may be
    // gone. Those whose transaction waits in the mempool stay open and do not hold reading back: their
    // transfer is still CONFIRMED, so the same fact seen again in a new block is not recorded twice.
    await this.recheck();
    const cursor = await prisma.chainCursor.findUnique({ where: { chainId: chain.chainId } });
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
      return this.rollBack(cursor);
    }

    const from = cursor.blockNumber + 1n;
    const settled = head - BigInt(this.reorgWindow);
    const deep = from <= settled;
    const span = BigInt(deep ? this.range : Math.min(this.range, NEAR_HEAD_RANGE));
    const to = deep ? min(from + span - 1n, settled) : min(from + span - 1n, head);
    let read: RangeRead | "reorg";
    try {
      read = deep ? await this.readDeep(from, to) : await this.readNear(cursor, from, to, latest);
    } catch (e) {
      if (!isLogRangeError(e)) throw e;
      this.shrink(e, from, to);
      return { tip: cursor.blockNumber, behind: true };
    }
    if (read === "reorg") return this.rollBack(cursor);
    this.grow();

    const last = read.headers[read.headers.length - 1]!;
    const usdcLogs = read.logs.filter((l) => sameAddress(l.address, chain.usdc));
    const { transfers, uses, cancels } = parseLogs(usdcLogs);
    const { pulls, revokes } = parseSubscriptionLogs(read.logs.filter((l) => sameAddress(l.address, chain.subscriptions)));
    const times = new Map(read.headers.map((h) => [BigInt(h.number), new Date(h.timestamp * 1000)]));
    const observations = await this.match(transfers, uses, pulls, times);
    await prisma.$transaction(async (tx) => {
      // Moves only from where this step started: a second indexer of the chain could never both advance.
      const moved = await tx.chainCursor.updateMany({
        where: { chainId: chain.chainId, blockNumber: cursor.blockNumber, blockHash: cursor.blockHash },
        data: { blockNumber: BigInt(last.number), blockHash: last.hash!, headBlock: head, blockTime: new Date(last.timestamp * 1000) },
      });
      if (moved.count !== 1) throw new Error("the cursor moved under this indexer (another one is running?)");
      await tx.chainBlock.createMany({ data: read.headers.map((h) => blockRow(chain.chainId, h)), skipDuplicates: true });
      await tx.chainBlock.deleteMany({ where: { chainId: chain.chainId, number: { lt: BigInt(last.number - this.reorgWindow) } } });
      await recordSeenTransfers(tx, chain.chainId, observations, uses, cancels);
      await applyRevokes(tx, chain.chainId, revokes, this.settings, new Date());
    });
    if (observations.length > 0) this.logger.info({ from, to, transfers: observations.length }, "chain money seen");
    if (deep) this.progress(from, to, head);
    return { tip: BigInt(last.number), behind: BigInt(last.number) < head };
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

  /** Near the head: every header of [from, to] and the range's logs in one batch, linked to the cursor. */
  private async readNear(cursor: Cursor, from: bigint, to: bigint, latest: Block): Promise<RangeRead | "reorg"> {
    const numbers: bigint[] = [];
    for (let n = from; n <= to; n++) numbers.push(n);
    const [headers, logs] = await withRpcRetry(() =>
      Promise.all([Promise.all(numbers.map((n) => (n === BigInt(latest.number) ? latest : this.rpc.getBlock(n)))), this.logs(from, to)]),
    );
    for (const [i, h] of headers.entries()) {
      // A block the node cannot give although its head is past it: another endpoint's view, or a
      // node still importing it. Read again rather than index around a hole.
      if (!h) throw new Error(`the node has no block ${numbers[i]} below its head; reading again`);
      if (i > 0 && h.parentHash !== headers[i - 1]!.hash) throw new Error(`the chain changed while blocks ${from}–${to} were read; reading again`);
    }
    if (headers[0]!.parentHash !== cursor.blockHash) return "reorg";
    const read = { headers: headers as Block[], logs };
    checkLogsAgainst(read, new Map(read.headers.map((h) => [h.number, h.hash!])));
    return read;
  }

  /** Deep below the head: the range's logs and its last header, in one batch. */
  private async readDeep(from: bigint, to: bigint): Promise<RangeRead> {
    const [last, logs] = await withRpcRetry(() => Promise.all([this.rpc.getBlock(to), this.logs(from, to)]));
    if (!last) throw new Error(`the node has no block ${to} below its head; reading again`);
    const read = { headers: [last], logs };
    checkLogsAgainst(read, new Map([[last.number, last.hash!]]));
    return read;
  }

  /**
   * The one eth_getLogs of a range: USDC's Transfer, AuthorizationUsed and AuthorizationCanceled
   * events, and SubscriptionsV1's Pulled and Revoked (two addresses, one call).
   */
  private logs(from: bigint, to: bigint): Promise<Log[]> {
    const topics = [[TRANSFER_TOPIC, AUTHORIZATION_USED_TOPIC, AUTHORIZATION_CANCELED_TOPIC, PULLED_TOPIC, REVOKED_TOPIC]];
    return this.rpc.getLogs({ fromBlock: from, toBlock: to, address: [this.chain.usdc, this.chain.subscriptions], topics });
  }

  /** A refused range: take the provider's stated limit (kept as a ceiling), or half; the next step tries again at once. */
  private shrink(e: unknown, from: bigint, to: bigint): void {
    const asked = Number(to - from + 1n);
    if (asked <= 1) throw new Error(`the RPC endpoint refuses eth_getLogs even for block ${from} alone`);
    const stated = statedRangeLimit(e);
    if (stated !== null && stated < asked) this.ceiling = stated;
    this.range = Math.max(1, Math.min(asked - 1, stated !== null && stated < asked ? stated : Math.floor(asked / 2)));
    this.successes = 0;
    this.logger.warn({ from, to, range: this.range }, "RPC endpoint refused the eth_getLogs range; reading smaller ranges");
  }

  private grow(): void {
    if (this.range >= this.ceiling || ++this.successes < GROW_AFTER) return;
    this.range = Math.min(this.ceiling, this.range * 2);
    this.successes = 0;
  }

  /** One line per range read while catching up: where it is, and how far the head still is. */
  private progress(from: bigint, to: bigint, head: bigint): void {
    const done = head - to <= BigInt(this.reorgWindow);
    this.logger.info({ from, to, head, behind: head - to }, done ? "caught up with the chain" : "catching up with the chain");
  }

  /** A chain's first indexing: start where no payment can be missed (see startBlock). */
  private async begin(latest: Block): Promise<IndexStep> {
    const { prisma, chain } = this;
    const start = await startBlock(prisma, this.rpc, chain, latest);
    await prisma.$transaction([
      prisma.chainCursor.create({
        data: {
          chainId: chain.chainId,
          blockNumber: BigInt(start.number),
          blockHash: start.hash!,
          headBlock: BigInt(latest.number),
          blockTime: new Date(start.timestamp * 1000),
        },
      }),
      prisma.chainBlock.create({ data: blockRow(chain.chainId, start) }),
    ]);
    this.logger.info({ block: start.number, head: latest.number }, "indexer started");
    return { tip: BigInt(start.number), behind: start.number < latest.number };
  }

  /**
   * The local devnet started over below our cursor (its chain state was not restored with the
   * database): what the ledger holds from the old devnet is not on this one. Said loudly once, then
   * handled as a reorg deeper than every stored block, which resumes on the new devnet.
   */
  private async startedOver(cursor: Cursor, head: bigint): Promise<IndexStep> {
    this.logger.error(
      { cursor: cursor.blockNumber, head },
      "the local devnet started over (its head is below the indexer's cursor and the cursor's block is not on it: a database restored without the devnet's state?); indexing the new devnet from its head, test payments seen only on the old devnet are checked against it",
    );
    return this.rollBack(cursor);
  }

  /**
   * Walks back from the cursor to the newest stored block the node still has, then forgets what was
   * recorded above it: block hashes, and what was seen but not confirmed. What was confirmed above it
   * (a reorg deeper than the confirmations) is recorded, in the same transaction, to be checked
   * against the node's receipts (`recheck`), at once or by the next step.
   */
  private async rollBack(cursor: Cursor): Promise<IndexStep> {
    const { prisma, chain, logger } = this;
    const stored = await prisma.chainBlock.findMany({ where: { chainId: chain.chainId }, orderBy: { number: "desc" } });
    let ancestor: { number: bigint; hash: string; timestamp: Date | null } | null = null;
    for (const block of stored) {
      const canonical = await withRpcRetry(() => this.rpc.getBlock(block.number));
      if (canonical?.hash === block.hash) {
        ancestor = block;
        break;
      }
    }
    if (!ancestor) {
      // Deeper than every block we kept: trust the node below them and read the whole window again
      // (transfers are recorded once per fact, so nothing is recorded twice). If the node has no such
      // block (a devnet started over), resume at its head.
      const below = stored.length > 0 ? stored[stored.length - 1]!.number - 1n : cursor.blockNumber;
      const base = (below >= 0n && (await withRpcRetry(() => this.rpc.getBlock(below)))) || (await withRpcRetry(() => this.rpc.getBlock("latest")));
      ancestor = { number: BigInt(base!.number), hash: base!.hash!, timestamp: new Date(base!.timestamp * 1000) };
      logger.error({ kept: stored.length, resumeAt: base!.number }, "reorg deeper than the stored blocks; indexing again from below them");
    }
    const at = ancestor;
    const depth = Number(cursor.blockNumber - at.number);
    const reason = `a reorg ${depth} blocks deep (deeper than the confirmations) on chain ${chain.chainId}`;
    const rechecks = await prisma.$transaction(async (tx) => {
      await tx.chainBlock.deleteMany({ where: { chainId: chain.chainId, number: { gt: at.number } } });
      await tx.chainCursor.update({ where: { chainId: chain.chainId }, data: { blockNumber: at.number, blockHash: at.hash, blockTime: at.timestamp } });
      // The confirmed clock cannot stand above the fork either.
      await tx.chainCursor.updateMany({
        where: { chainId: chain.chainId, confirmedBlock: { gt: at.number } },
        data: { confirmedBlock: at.number, confirmedTime: at.timestamp },
      });
      return forgetSeenAbove(tx, chain.chainId, at.number, { depth, reason });
    });
    logger.warn(
      { from: cursor.blockNumber, to: at.number, depth, rechecks },
      "chain reorganised; what was seen above the fork and not confirmed is forgotten, what was confirmed there is checked again",
    );
    // Checked at once when the node allows, else as the next step's first work; either way the caller
    // hears of the reorg (and reads the relayer's nonce again).
    await this.recheck().catch((e) => logger.warn({ err: (e as Error).message }, "the reorg's re-checks wait for the next step"));
    return { tip: at.number, behind: true, reorged: true };
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
  private async recheck(): Promise<void> {
    const pending = await pendingRechecks(this.prisma, this.chain.chainId);
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
      const answers = await Promise.allSettled(chunk.map((hash) => withRpcRetry(() => this.onChain(hash))));
      const findings: RecheckFinding[] = [];
      for (const [j, answer] of answers.entries()) {
        if (answer.status === "rejected") continue;
        for (const recheck of byTx.get(chunk[j]!)!) {
          const found = answer.value;
          if (found === "unmined" && now.getTime() - recheck.createdAt.getTime() < RECHECK_PENDING_MS) waiting++;
          else findings.push({ recheck, at: found === "unmined" || found === null ? null : (found.get(recheck.factKey)?.at(recheck.transferId) ?? null) });
        }
      }
      const done = await settleRechecks(this.prisma, this.settings, findings, now);
      settled += findings.length;
      reincluded += done.reincluded;
      reversed.push(...done.reversed.map((c) => c.id));
      const failed = answers.find((a) => a.status === "rejected");
      if (failed) {
        this.logger.error(
          { pending: pending.length, settled, err: (failed.reason as Error).message },
          "could not re-check the transfers a reorg left above its fork (the node did not give their receipts); indexing waits and tries again",
        );
        throw failed.reason;
      }
    }
    if (waiting > 0) this.logger.warn({ waiting }, "transactions a reorg took away are still in the node's mempool: their re-checks wait for them to be mined");
    if (settled === 0) return;
    this.logger.error(
      { rechecked: settled, reincluded, reversed: settled - reincluded, charges: reversed },
      "a reorg deeper than the confirmations moved confirmed transfers; re-included ones are kept, the others reversed (the charges need review); raise this chain's confirmations",
    );
  }

  /**
   * What the chain has of transaction `hash` now: its USDC transfers when it is mined and did not
   * revert, "unmined" while the node holds it without a receipt, null when it is gone.
   */
  private async onChain(hash: string): Promise<ReturnType<typeof factsOf> | "unmined" | null> {
    const receipt = await this.rpc.getTransactionReceipt(hash);
    if (receipt) return receipt.status === 1 ? factsOf(receipt, this.chain.usdc, this.chain.subscriptions) : null;
    return (await this.rpc.getTransaction(hash)) ? "unmined" : null;
  }
}

/** The USDC transfers and subscription pulls (`subscriptions`: SubscriptionsV1's address) of a receipt by fact key, with where each sits now. */
export function factsOf(receipt: TransactionReceipt, usdc: string, subscriptions?: string): Map<string, { at: (id: string) => Relocation }> {
  const logs = receipt.logs.filter((l) => sameAddress(l.address, usdc));
  const { transfers } = parseLogs(logs as unknown as Log[]);
  const keys = factKeys(transfers);
  const facts = new Map(
    transfers.map((t, i) => [keys[i]!, { at: (id: string) => ({ id, blockNumber: t.blockNumber, blockHash: t.blockHash, logIndex: t.logIndex }) }]),
  );
  const pulled = subscriptions ? pullFactsOf(receipt.logs.filter((l) => sameAddress(l.address, subscriptions)) as unknown as Log[]) : [];
  for (const { key, log } of pulled)
    facts.set(key, { at: (id: string) => ({ id, blockNumber: log.blockNumber, blockHash: log.blockHash, logIndex: log.logIndex }) });
  return facts;
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Margin for the clocks of the database and the chain disagreeing. */
const CLOCK_SKEW_SECONDS = 300;

/**
 * Where a chain's first indexing starts: the head, or, when charges of the chain's mode are open
 * (their addresses may be paid on this chain, picked or not), the last block before the oldest of
 * them, found by binary search on block timestamps (about log2(head) calls, once), so no payment is
 * missed.
 */
async function startBlock(prisma: Prisma, rpc: ChainRpc, chain: EnabledChain, latest: Block): Promise<Block> {
  const [row] = await prisma.$queryRaw<{ first: Date | null }[]>`
    SELECT min(created_at) AS first FROM charges WHERE status = 'PENDING' AND livemode = ${!chain.testnet}`;
  return row?.first ? blockBefore(rpc, row.first, latest) : latest;
}

/**
 * The last block before `time` (less a margin for the database's and the chain's clocks), or
 * `latest` when the chain has not reached it: a binary search on block timestamps, about log2(head) calls.
 */
export async function blockBefore(rpc: ChainRpc, time: Date, latest: Block): Promise<Block> {
  const before = Math.floor(time.getTime() / 1000) - CLOCK_SKEW_SECONDS;
  if (latest.timestamp < before) return latest;
  const block = async (n: number) => {
    const b = await withRpcRetry(() => rpc.getBlock(n));
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

/**
 * The block range a provider's refusal says it takes, when it says: a suggested range
 * ("this block range should work: [0x10, 0x5db]", Alchemy) or a limit ("exceeds limit of 2000",
 * "limited to a 10,000 range", "bigger than range limit 500"). Null for a refusal by log count.
 */
export function statedRangeLimit(e: unknown): number | null {
  const { error } = nodeErrorOf(e);
  const text = `${String(error?.message ?? "")} ${JSON.stringify(error?.data ?? "")}`;
  const suggested = /\[(0x[0-9a-f]+),\s*(0x[0-9a-f]+)\]/i.exec(text);
  if (suggested) return Number(BigInt(suggested[2]!) - BigInt(suggested[1]!) + 1n);
  const limit = /(?:limit of|limited to an?|range limit|up to an?)\s*([\d,]+)/i.exec(text);
  const n = limit ? Number(limit[1]!.replace(/,/g, "")) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** Every log of a block whose header was read must carry that header's hash: one consistent view. */
function checkLogsAgainst(read: RangeRead, hashes: Map<number, string>): void {
  for (const log of read.logs) {
    const hash = hashes.get(log.blockNumber);
    if (hash !== undefined && hash !== log.blockHash) throw new Error(`logs of block ${log.blockNumber} are from another fork; reading again`);
  }
}

function blockRow(chainId: number, b: Block) {
  return { chainId, number: BigInt(b.number), hash: b.hash!, parentHash: b.parentHash, timestamp: new Date(b.timestamp * 1000) };
}

/**
 * A range's well-formed USDC logs, in log order: the non-zero Transfers (parties checksummed), the
 * AuthorizationUsed events (whose nonce was spent) and the AuthorizationCanceled ones (whose nonce
 * its signer cancelled). Block times are filled in by the caller.
 */
export function parseLogs(logs: readonly Log[]): { transfers: SeenTransfer[]; uses: SeenAuthorizationUse[]; cancels: SeenAuthorizationUse[] } {
  const ordered = [...logs].sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
  const transfers = ordered
    .filter((l) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3 && l.data.length === 66 && BigInt(l.data) > 0n)
    .map((l) => ({
      txHash: l.transactionHash,
      logIndex: l.index,
      blockNumber: BigInt(l.blockNumber),
      blockHash: l.blockHash,
      blockTime: null,
      from: topicAddress(l.topics[1]!),
      to: topicAddress(l.topics[2]!),
      amount: BigInt(l.data),
    }));
  const nonceEvents = (topic: string) =>
    ordered
      .filter((l) => l.topics[0] === topic && l.topics.length === 3)
      .map((l) => ({
        txHash: l.transactionHash,
        blockNumber: BigInt(l.blockNumber),
        authorizer: topicAddress(l.topics[1]!),
        nonce: l.topics[2]!.toLowerCase(),
      }));
  return { transfers, uses: nonceEvents(AUTHORIZATION_USED_TOPIC), cancels: nonceEvents(AUTHORIZATION_CANCELED_TOPIC) };
}

function topicAddress(topic: string): string {
  return getAddress(`0x${topic.slice(26)}`);
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
