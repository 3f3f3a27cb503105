// The indexer: follows a chain's head and records what the chain did with our clones' money,
// whoever did it: every USDC Transfer into a clone (a payment), every Flushed event of a clone (a
// settlement: anyone may call a clone's `flush`), and the transfers that pay refunds (from a
// settlement wallet to a refund's address: the merchant may send them by any means). Each range of blocks costs two eth_getLogs (USDC's
// Transfers; Flushed events that name USDC) and the headers it needs, in one batch; addresses are
// matched against the clones in the database, so the RPC calls per block do not grow with the number
// of open charges.
//
// Two ways of reading, by depth:
// - near the head (the last `reorgWindow` blocks) every header of a range is read and linked to its
//   parent, so a reorg shows as a parent that is not our cursor, and is rolled back;
// - further back (catching up after an outage), ranges of up to MAX_RANGE blocks are read with the
//   range's last header only: those blocks are beyond any reorg the confirmations absorb.
// A range a provider refuses is cut to the limit the provider states (and never grown past it), or
// halved when it states none (too many logs: a denser stretch of chain), growing back after a run
// of successes.
//
// Invariants:
// - the cursor moves only in a transaction that also stores the range's payments, settlements and
//   block hashes, one range per transaction (never one across ranges); a crash re-reads a range
//   (payments and settlements are unique per chain, tx hash and log index) and never skips one;
// - logs are used only if they come from the blocks read with them (same hashes, same batch, same
//   endpoint), and the RPC client has already checked every block and log against its request;
// - a node whose head is behind our cursor is lagging, not reorganised: nothing is rolled back, the
//   step waits, and the client prefers another endpoint for a while;
// - the first run starts no later than the first charge that picked the chain, so a payment made
//   before any worker ran is still found.
import { type Block, getAddress, id, Interface, type Log, zeroPadValue } from "ethers";
import type { Logger } from "pino";
import type { Prisma } from "../db/client.js";
import { newId } from "../domain/ids.js";
import { forgetSeenChainMoneyAbove, recordSeenChainMoney, type SeenChainMoney } from "../domain/payments.js";
import { forgetRefundTransfersAbove, recordRefundTransfers } from "../domain/refunds.js";
import { ChargeCloneArtifact } from "../chain/artifacts.js";
import type { EnabledChain } from "../chain/chains.js";
import { type ChainRpc, isLogRangeError, nodeErrorOf, withRpcRetry } from "../chain/rpc.js";

const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");
const cloneAbi = new Interface(ChargeCloneArtifact.abi);
const FLUSHED_TOPIC = cloneAbi.getEvent("Flushed")!.topicHash;

/** Most blocks per eth_getLogs: the tightest common hosted-provider limit (2,000 blocks). */
export const MAX_RANGE = 2_000;
/** Most blocks per step near the head, where every header is read. */
const NEAR_HEAD_RANGE = 100;
/** Successful steps at a reduced range before it is doubled again. */
const GROW_AFTER = 20;

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

/** What one range of blocks holds for us. */
interface RangeRead {
  /** The headers read: every block of the range near the head, the last one only further back. */
  headers: Block[];
  transfers: Log[];
  flushes: Log[];
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
  ) {
    this.reorgWindow = Math.max(128, chain.confirmations * 2);
  }

  /** Reads the next range of blocks and records the payments and settlements of clones in it. */
  async step(): Promise<IndexStep> {
    const { prisma, chain } = this;
    const cursor = await prisma.chainCursor.findUnique({ where: { chainId: chain.chainId } });
    const latest = await withRpcRetry(() => this.rpc.getBlock("latest"));
    if (!latest) throw new Error("the node returned no latest block");
    if (!cursor) return this.begin(latest);

    const head = BigInt(latest.number);
    if (head < cursor.blockNumber) {
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
    const transfers = transfersOf(read.transfers);
    const found = await this.match(read, transfers);
    await prisma.$transaction(async (tx) => {
      // Moves only from where this step started: a second indexer of the chain could never both advance.
      const moved = await tx.chainCursor.updateMany({
        where: { chainId: chain.chainId, blockNumber: cursor.blockNumber, blockHash: cursor.blockHash },
        data: { blockNumber: BigInt(last.number), blockHash: last.hash!, headBlock: head },
      });
      if (moved.count !== 1) throw new Error("the cursor moved under this indexer (another one is running?)");
      await tx.chainBlock.createMany({ data: read.headers.map((h) => blockRow(chain.chainId, h)), skipDuplicates: true });
      await tx.chainBlock.deleteMany({ where: { chainId: chain.chainId, number: { lt: BigInt(last.number - this.reorgWindow) } } });
      await recordSeenChainMoney(tx, found);
      await recordRefundTransfers(
        tx,
        chain.chainId,
        transfers.map((t) => ({
          txHash: t.log.transactionHash,
          logIndex: t.log.index,
          blockNumber: BigInt(t.log.blockNumber),
          from: t.from,
          to: t.to,
          amount: t.amount,
        })),
      );
    });
    if (found.payments.length + found.settlements.length > 0) {
      this.logger.info({ from, to, payments: found.payments.length, settlements: found.settlements.length }, "chain money seen");
    }
    if (deep) this.progress(from, to, head);
    return { tip: BigInt(last.number), behind: BigInt(last.number) < head };
  }

  /** Near the head: every header of [from, to] and the range's logs in one batch, linked to the cursor. */
  private async readNear(cursor: Cursor, from: bigint, to: bigint, latest: Block): Promise<RangeRead | "reorg"> {
    const numbers: bigint[] = [];
    for (let n = from; n <= to; n++) numbers.push(n);
    const [headers, transfers, flushes] = await withRpcRetry(() =>
      Promise.all([Promise.all(numbers.map((n) => (n === BigInt(latest.number) ? latest : this.rpc.getBlock(n)))), ...this.logs(from, to)]),
    );
    for (const [i, h] of headers.entries()) {
      // A block the node cannot give although its head is past it: another endpoint's view, or a
      // node still importing it. Read again rather than index around a hole.
      if (!h) throw new Error(`the node has no block ${numbers[i]} below its head; reading again`);
      if (i > 0 && h.parentHash !== headers[i - 1]!.hash) throw new Error(`the chain changed while blocks ${from}–${to} were read; reading again`);
    }
    if (headers[0]!.parentHash !== cursor.blockHash) return "reorg";
    const read = { headers: headers as Block[], transfers, flushes };
    checkLogsAgainst(read, new Map(read.headers.map((h) => [h.number, h.hash!])));
    return read;
  }

  /** Deep below the head: the range's logs and its last header, in one batch. */
  private async readDeep(from: bigint, to: bigint): Promise<RangeRead> {
    const [last, transfers, flushes] = await withRpcRetry(() => Promise.all([this.rpc.getBlock(to), ...this.logs(from, to)]));
    if (!last) throw new Error(`the node has no block ${to} below its head; reading again`);
    const read = { headers: [last], transfers, flushes };
    checkLogsAgainst(read, new Map([[last.number, last.hash!]]));
    return read;
  }

  /** The two eth_getLogs of a range: USDC Transfers, and Flushed events of any contract that name USDC. */
  private logs(from: bigint, to: bigint): [Promise<Log[]>, Promise<Log[]>] {
    const range = { fromBlock: from, toBlock: to };
    return [
      this.rpc.getLogs({ ...range, address: this.chain.usdc, topics: [TRANSFER_TOPIC] }),
      this.rpc.getLogs({ ...range, topics: [FLUSHED_TOPIC, zeroPadValue(this.chain.usdc, 32)] }),
    ];
  }

  /** The payments (transfers into clones) and settlements (clones' Flushed events) among a range's logs. */
  private async match(read: RangeRead, transfers: ParsedTransfer[]): Promise<SeenChainMoney> {
    const chainId = this.chain.chainId;
    const flushes = read.flushes.flatMap((l) => {
      try {
        const parsed = cloneAbi.parseLog(l);
        return parsed ? [{ log: l, net: parsed.args.getValue("net") as bigint, fee: parsed.args.getValue("fee") as bigint }] : [];
      } catch {
        return []; // Someone else's contract with an event of the same name and a different shape.
      }
    });
    const addresses = [...new Set([...transfers.map((t) => t.to), ...flushes.map((f) => getAddress(f.log.address))])];
    if (addresses.length === 0) return { payments: [], settlements: [] };
    const clones = await this.prisma.$queryRaw<{ id: string; cloneAddress: string }[]>`
      SELECT id, clone_address AS "cloneAddress" FROM charges WHERE chain_id = ${chainId} AND clone_address = ANY(${addresses})`;
    const chargeOf = new Map(clones.map((c) => [c.cloneAddress, c.id]));
    const position = (l: Log) => ({ chainId, txHash: l.transactionHash, logIndex: l.index, blockNumber: BigInt(l.blockNumber), blockHash: l.blockHash });
    return {
      payments: transfers
        .filter((t) => chargeOf.has(t.to))
        .map((t) => ({ id: newId("pay"), chargeId: chargeOf.get(t.to)!, ...position(t.log), fromAddress: t.from, amount: t.amount.toString() })),
      settlements: flushes
        .filter((f) => chargeOf.has(getAddress(f.log.address)))
        .map((f) => ({
          id: newId("stl"),
          chargeId: chargeOf.get(getAddress(f.log.address))!,
          ...position(f.log),
          netAmount: f.net.toString(),
          feeAmount: f.fee.toString(),
        })),
    };
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
    const start = await startBlock(prisma, this.rpc, chain.chainId, latest);
    await prisma.$transaction([
      prisma.chainCursor.create({
        data: { chainId: chain.chainId, blockNumber: BigInt(start.number), blockHash: start.hash!, headBlock: BigInt(latest.number) },
      }),
      prisma.chainBlock.create({ data: blockRow(chain.chainId, start) }),
    ]);
    this.logger.info({ block: start.number, head: latest.number }, "indexer started");
    return { tip: BigInt(start.number), behind: start.number < latest.number };
  }

  /**
   * Walks back from the cursor to the newest stored block the node still has, then deletes what was
   * recorded above it: block hashes, and SEEN payments and settlements (confirmed ones are beyond the
   * chain's confirmations and are kept).
   */
  private async rollBack(cursor: Cursor): Promise<IndexStep> {
    const { prisma, chain, logger } = this;
    const stored = await prisma.chainBlock.findMany({ where: { chainId: chain.chainId }, orderBy: { number: "desc" } });
    let ancestor: { number: bigint; hash: string } | null = null;
    for (const block of stored) {
      const canonical = await withRpcRetry(() => this.rpc.getBlock(block.number));
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
      const base = (below >= 0n && (await withRpcRetry(() => this.rpc.getBlock(below)))) || (await withRpcRetry(() => this.rpc.getBlock("latest")));
      ancestor = { number: BigInt(base!.number), hash: base!.hash! };
      logger.error({ kept: stored.length, resumeAt: base!.number }, "reorg deeper than the stored blocks; indexing again from below them");
    }
    const confirmedLost = await prisma.$transaction(async (tx) => {
      await tx.chainBlock.deleteMany({ where: { chainId: chain.chainId, number: { gt: ancestor.number } } });
      await tx.chainCursor.update({ where: { chainId: chain.chainId }, data: { blockNumber: ancestor.number, blockHash: ancestor.hash } });
      await forgetRefundTransfersAbove(tx, chain.chainId, ancestor.number);
      return forgetSeenChainMoneyAbove(tx, chain.chainId, ancestor.number);
    });
    const depth = Number(cursor.blockNumber - ancestor.number);
    logger.warn({ from: cursor.blockNumber, to: ancestor.number, depth }, "chain reorganised; unconfirmed payments and settlements above the fork rolled back");
    // Deeper than the confirmations: nothing to undo safely (the money may already be paid out).
    if (confirmedLost > 0) logger.error({ records: confirmedLost }, "a reorg removed confirmed payments or settlements; raise this chain's confirmations");
    return { tip: ancestor.number, behind: true };
  }
}

/** Margin for the clocks of the database and the chain disagreeing. */
const CLOCK_SKEW_SECONDS = 300;

/**
 * Where a chain's first indexing starts: the head, or, when charges picked this chain before any
 * worker indexed it (an API ran without one), the last block before the first of them, found by
 * binary search on block timestamps (about log2(head) calls, once), so no payment is missed.
 */
async function startBlock(prisma: Prisma, rpc: ChainRpc, chainId: number, latest: Block): Promise<Block> {
  const [row] = await prisma.$queryRaw<{ first: Date | null }[]>`SELECT min(created_at) AS first FROM clone_deployments WHERE chain_id = ${chainId}`;
  if (!row?.first) return latest;
  const before = Math.floor(row.first.getTime() / 1000) - CLOCK_SKEW_SECONDS;
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
  for (const log of [...read.transfers, ...read.flushes]) {
    const hash = hashes.get(log.blockNumber);
    if (hash !== undefined && hash !== log.blockHash) throw new Error(`logs of block ${log.blockNumber} are from another fork; reading again`);
  }
}

function blockRow(chainId: number, b: Block) {
  return { chainId, number: BigInt(b.number), hash: b.hash!, parentHash: b.parentHash };
}

/** A USDC Transfer log with its parties and amount. */
interface ParsedTransfer {
  log: Log;
  from: string;
  to: string;
  amount: bigint;
}

/** The well-formed, non-zero Transfers among a range's USDC logs. */
function transfersOf(logs: Log[]): ParsedTransfer[] {
  return logs
    .filter((l) => l.topics.length === 3 && l.data.length === 66 && BigInt(l.data) > 0n)
    .map((l) => ({ log: l, from: topicAddress(l.topics[1]!), to: topicAddress(l.topics[2]!), amount: BigInt(l.data) }));
}

function topicAddress(topic: string): string {
  return getAddress(`0x${topic.slice(26)}`);
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
