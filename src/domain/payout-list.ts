// The merchant's payouts as a list (the dashboard's Payouts page, GraphQL `payouts`): each transaction
// that paid money out of the merchant's charges' addresses on one chain, whoever sent it, with what
// reached the merchant's wallet, the fee, the charges it paid and whether a reorg took it back. A
// transaction may pay many charges (and other merchants' too): it is one payout per merchant and mode.
//
// Everything is read from the ledger's payout and fee rows (domain/ledger.ts), so a payout shows once
// it is confirmed. A payout sits in the list where its first row does (by (createdAt, id)), and that
// row's id is the payout's id and cursor: the rows of one transaction are found through its chain
// transfers (indexed by chain and hash), so a page costs the same however long the ledger is.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { Prisma as P } from "../generated/prisma/client.js";
import { formatAmount } from "./money.js";
import { keysetPage, type Page, type PageEnd, type Position } from "./paging.js";
import type { PayoutFilters, PayoutListQuery } from "./payout-requests.js";
import { inScope, type Scope } from "./scope.js";

export const PAYOUT_STATUSES = ["paid", "reversed"] as const;

/** A payout as the API shows it. */
export const PayoutResource = z.object({
  id: z.string().describe("The id of the payout's first ledger row (btx_…)."),
  chainId: z.number().int().describe("The chain it paid out on."),
  txHash: z.string().describe("The transaction that paid out."),
  blockNumber: z.number().int().describe("The block it is in."),
  amount: z.string().describe("Paid to your wallet (net of the fee)."),
  feeAmount: z.string().describe("Taken as the protocol fee."),
  chargeIds: z.array(z.string()).describe("The charges whose addresses it paid out, by id."),
  status: z.enum(PAYOUT_STATUSES).describe("Paid, or reversed: a reorg deeper than the confirmations took it away (the ledger has reversals)."),
  createdAt: z.string().describe("When the ledger recorded it (its confirmation)."),
});
export type PayoutResource = z.infer<typeof PayoutResource>;

/** A payout's first ledger row: where the payout sits in the list. */
interface Anchor extends Position {
  chainId: number;
  txHash: string;
}

/**
 * The where-clause of the payouts' first rows (`x`) of `scope` recorded in the filters' window: a row
 * is its payout's first when no row of the same transaction, merchant and mode comes before it.
 */
function firstRows(scope: Scope, { createdGte, createdLt }: PayoutFilters): P.Sql {
  return P.sql`x.merchant_id = ${scope.merchantId} AND x.livemode = ${scope.livemode} AND x.type IN ('payout', 'fee')
    ${createdGte ? P.sql`AND x.created_at >= ${createdGte}` : P.empty} ${createdLt ? P.sql`AND x.created_at < ${createdLt}` : P.empty}
    AND NOT EXISTS (
      SELECT 1 FROM chain_transfers t JOIN balance_transactions y ON y.transfer_id = t.id AND y.type <> 'reversal'
      WHERE t.chain_id = x.chain_id AND t.tx_hash = x.tx_hash AND t.kind IN ('PAYOUT', 'FEE')
        AND y.merchant_id = x.merchant_id AND y.livemode = x.livemode AND (y.created_at, y.id) < (x.created_at, x.id))`;
}

/** One page of the payouts of `scope`, newest first, filtered by when they were recorded. */
export async function listPayouts(prisma: Prisma, scope: Scope, query: PayoutListQuery, end: PageEnd = "newest"): Promise<Page<PayoutResource>> {
  const { limit, startingAfter, endingBefore, ...filters } = query;
  let cursor: Position | null = null;
  const page = await keysetPage<Anchor>(
    "payout",
    { limit, startingAfter, endingBefore },
    async (id) => {
      cursor = await prisma.balanceTransaction.findFirst({
        where: { id, ...inScope(scope), type: { in: ["payout", "fee"] } },
        select: { id: true, createdAt: true },
      });
      return cursor;
    },
    (q) => {
      const order = P.raw(q.orderBy[0].createdAt === "desc" ? "DESC" : "ASC");
      const beyond = cursor
        ? q.orderBy[0].createdAt === "desc"
          ? P.sql`AND (x.created_at, x.id) < (${cursor.createdAt}, ${cursor.id})`
          : P.sql`AND (x.created_at, x.id) > (${cursor.createdAt}, ${cursor.id})`
        : P.empty;
      return prisma.$queryRaw<Anchor[]>`
        SELECT x.id, x.created_at AS "createdAt", x.chain_id AS "chainId", x.tx_hash AS "txHash"
        FROM balance_transactions x WHERE ${firstRows(scope, filters)} ${beyond}
        ORDER BY x.created_at ${order}, x.id ${order} LIMIT ${q.take}`;
    },
    end,
  );
  return { data: await payoutsOf(prisma, scope, page.data), hasMore: page.hasMore };
}

/** The payouts that `anchors` begin, in their order. */
async function payoutsOf(prisma: Prisma, scope: Scope, anchors: Anchor[]): Promise<PayoutResource[]> {
  if (anchors.length === 0) return [];
  const rows = await prisma.$queryRaw<
    { chainId: number; txHash: string; blockNumber: bigint; net: string; fee: string; chargeIds: string[]; reversed: boolean }[]
  >`
    SELECT t.chain_id AS "chainId", t.tx_hash AS "txHash", min(b.block_number) AS "blockNumber",
      (-coalesce(sum(b.amount) FILTER (WHERE b.type = 'payout'), 0))::text AS net,
      (-coalesce(sum(b.amount) FILTER (WHERE b.type = 'fee'), 0))::text AS fee,
      array_agg(DISTINCT b.charge_id) AS "chargeIds",
      bool_or(EXISTS (SELECT 1 FROM balance_transactions r WHERE r.reverses_id = b.id)) AS reversed
    FROM chain_transfers t JOIN balance_transactions b ON b.transfer_id = t.id AND b.type <> 'reversal'
    WHERE t.tx_hash = ANY(${anchors.map((a) => a.txHash)}) AND t.kind IN ('PAYOUT', 'FEE')
      AND b.merchant_id = ${scope.merchantId} AND b.livemode = ${scope.livemode}
    GROUP BY t.chain_id, t.tx_hash`;
  const byTx = new Map(rows.map((r) => [`${r.chainId}:${r.txHash}`, r]));
  return anchors.map((a) => {
    const r = byTx.get(`${a.chainId}:${a.txHash}`)!;
    return {
      id: a.id,
      chainId: a.chainId,
      txHash: a.txHash,
      blockNumber: Number(r.blockNumber),
      amount: formatAmount(BigInt(r.net)),
      feeAmount: formatAmount(BigInt(r.fee)),
      chargeIds: [...r.chargeIds].sort(),
      status: r.reversed ? "reversed" : "paid",
      createdAt: a.createdAt.toISOString(),
    };
  });
}

/** How many payouts of `scope` match the filters (GraphQL's `totalCount`). */
export async function countPayouts(prisma: Prisma, scope: Scope, filters: PayoutFilters): Promise<number> {
  const [row] = await prisma.$queryRaw<{ count: bigint }[]>`SELECT count(*) AS count FROM balance_transactions x WHERE ${firstRows(scope, filters)}`;
  return Number(row!.count);
}
