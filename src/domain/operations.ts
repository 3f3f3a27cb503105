// What an operator watches besides payouts and relayers (payouts.ts, chain-status.ts), read from the
// database so every process reports the same: charges still open per chain, charges needing review,
// the money the ledger says the clones hold, the relayer's transactions in flight or failed, the block
// each chain is indexed to and its head, the webhook outbox, and the gas spent on payments without
// gas. Each is one grouped query over an index, cheap enough for every scrape.
import type { Prisma } from "../db/client.js";

/** The figures /metrics reports; `chainId` null is a charge whose buyer has not picked a chain yet. */
export interface OperatorFigures {
  openCharges: { chainId: number | null; status: string; count: number }[];
  /** Charges whose ledger and chain disagree, per mode, until someone marks them reviewed. */
  needingReview: { livemode: boolean; count: number }[];
  /** Per chain: confirmed USDC the ledger says the clones hold (base units), and how many clones hold some. */
  held: { chainId: number; amount: bigint; clones: number }[];
  /** The relayer's transactions (deploy batches, flushes) in flight, and those that ever failed. */
  relayerTransactions: { chainId: number; kind: string; status: string; count: number }[];
  /** Per chain: the block indexed to and the node's head when it was read (null before the first move). */
  indexedBlocks: { chainId: number; block: bigint; head: bigint | null }[];
  outbox: { pending: number; oldestDueSeconds: number };
  /** Per chain: gas the relayer spent on buyers' payments without gas, all time, and counted against today's budget. */
  gaslessGas: { chainId: number; total: bigint; today: bigint }[];
}

/** Reads every figure at once. */
export async function operatorFigures(prisma: Prisma, now = new Date()): Promise<OperatorFigures> {
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const [open, review, held, relayerTransactions, cursors, outbox, gasless] = await Promise.all([
    prisma.$queryRaw<{ chainId: number | null; status: string; count: bigint }[]>`
      SELECT chain_id AS "chainId", status::text AS status, count(*) AS count FROM charges
      WHERE status IN ('PENDING', 'RECEIVED') GROUP BY 1, 2 ORDER BY 1, 2`,
    prisma.$queryRaw<{ livemode: boolean; count: bigint }[]>`
      SELECT livemode, count(*) AS count FROM charges WHERE review_reason IS NOT NULL GROUP BY 1 ORDER BY 1`,
    prisma.$queryRaw<{ chainId: number; amount: string; clones: bigint }[]>`
      SELECT chain_id AS "chainId", sum(held)::text AS amount, count(*) AS clones FROM clones WHERE held > 0 GROUP BY 1 ORDER BY 1`,
    prisma.$queryRaw<{ chainId: number; kind: string; status: string; count: bigint }[]>`
      SELECT chain_id AS "chainId", kind::text AS kind, status::text AS status, count(*) AS count FROM relayer_transactions
      WHERE status IN ('SENT', 'MINED', 'FAILED') GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    prisma.chainCursor.findMany({ select: { chainId: true, blockNumber: true, headBlock: true }, orderBy: { chainId: "asc" } }),
    prisma.$queryRaw<{ pending: bigint; oldestDue: Date | null }[]>`
      SELECT count(*) AS pending, min(next_attempt_at) FILTER (WHERE next_attempt_at <= ${now}) AS "oldestDue"
      FROM webhook_deliveries WHERE status = 'PENDING'`,
    // Payments without gas are few (each chain's daily budget bounds them): a sum over them all is cheap.
    prisma.$queryRaw<{ chainId: number; total: string; today: string }[]>`
      SELECT chain_id AS "chainId", coalesce(sum(gas_used), 0)::text AS total,
        coalesce(sum(coalesce(gas_used, gas_estimate)) FILTER (WHERE created_at >= ${dayStart} AND (status <> 'FAILED' OR gas_used IS NOT NULL)), 0)::text AS today
      FROM authorizations WHERE purpose = 'PAYMENT' GROUP BY 1 ORDER BY 1`,
  ]);
  const oldestDue = outbox[0]?.oldestDue;
  return {
    openCharges: open.map((r) => ({ ...r, count: Number(r.count) })),
    needingReview: review.map((r) => ({ livemode: r.livemode, count: Number(r.count) })),
    held: held.map((h) => ({ chainId: h.chainId, amount: BigInt(h.amount), clones: Number(h.clones) })),
    relayerTransactions: relayerTransactions.map((r) => ({ ...r, count: Number(r.count) })),
    indexedBlocks: cursors.map((c) => ({ chainId: c.chainId, block: c.blockNumber, head: c.headBlock })),
    outbox: { pending: Number(outbox[0]?.pending ?? 0), oldestDueSeconds: oldestDue ? Math.max(0, (now.getTime() - oldestDue.getTime()) / 1000) : 0 },
    gaslessGas: gasless.map((g) => ({ chainId: g.chainId, total: BigInt(g.total), today: BigInt(g.today) })),
  };
}
