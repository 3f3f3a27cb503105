// How many blocks the indexer asks one eth_getLogs for. A range a provider refuses is cut to the limit
// the provider states (and never grown past it), or halved when it states none (too many logs: a
// denser stretch of chain), growing back after a run of successes.
import type { Logger } from "pino";
import { nodeErrorOf } from "../chain/rpc.js";

/** Most blocks per eth_getLogs: the tightest common hosted-provider limit (2,000 blocks). */
export const MAX_RANGE = 2_000n;
/** Most blocks per step near the head, where every header is read. */
const NEAR_HEAD_RANGE = 100n;
/** Successful steps at a reduced range before it is doubled again. */
const GROW_AFTER = 20;

/** The range one chain's provider takes; keep one per indexer. */
export class RangeSize {
  private range = MAX_RANGE;
  /** The most blocks the provider said it takes (its limit, or the range it suggested): never grown past. */
  private ceiling = MAX_RANGE;
  private successes = 0;

  constructor(private readonly logger: Logger) {}

  /** The last block of the range starting at `from`: no further than `until`, and shorter near the head. */
  end(from: bigint, until: bigint, nearHead: boolean): bigint {
    const span = nearHead ? min(this.range, NEAR_HEAD_RANGE) : this.range;
    return min(from + span - 1n, until);
  }

  /** A refused range: take the provider's stated limit (kept as a ceiling), or half; the next step tries again at once. */
  shrink(e: unknown, from: bigint, to: bigint): void {
    const asked = to - from + 1n;
    if (asked <= 1n) throw new Error(`the RPC endpoint refuses eth_getLogs even for block ${from} alone`);
    const stated = statedRangeLimit(e);
    const limit = stated !== null && BigInt(stated) < asked ? BigInt(stated) : null;
    if (limit !== null) this.ceiling = limit;
    this.range = max(1n, min(asked - 1n, limit ?? asked / 2n));
    this.successes = 0;
    this.logger.warn({ from, to, range: this.range }, "RPC endpoint refused the eth_getLogs range; reading smaller ranges");
  }

  /** A range read: after GROW_AFTER of them in a row, double a reduced range (up to the ceiling). */
  grow(): void {
    if (this.range >= this.ceiling || ++this.successes < GROW_AFTER) return;
    this.range = min(this.ceiling, this.range * 2n);
    this.successes = 0;
  }
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

/** The smaller of two block numbers. */
export const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
