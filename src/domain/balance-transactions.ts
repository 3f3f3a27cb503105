// The ledger as merchants and accountants read it (.docs/ledger.md): balance transactions, newest
// first, filtered by charge, refund, type and creation time, as JSON pages or as one CSV of every
// page; and the balance: per chain, what the clones hold, what is on its way, what was paid out, the
// fees and the refunds. The rows themselves are written by domain/ledger.ts only.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import type { BalanceTransaction, Prisma as P } from "../generated/prisma/client.js";
import { BALANCE_TRANSACTION_TYPES, type BalanceTransactionFilters, type BalanceTransactionListQuery } from "./balance-transaction-requests.js";
import { csvLines, olderThan } from "./csv.js";
import { invalidParam, notFound } from "./errors.js";
import { formatAmount } from "./money.js";
import { keysetPage, type Page, type PageEnd } from "./paging.js";
import { inScope, type Scope } from "./scope.js";

export type { BalanceTransaction };

// Defined with the requests that filter by them; the GraphQL door finds them here with the rest of the ledger.
export { BALANCE_TRANSACTION_TYPES };

/** The public JSON form of a balance transaction. */
export const BalanceTransactionResource = z.object({
  id: z.string().describe("The row's id (btx_…)."),
  object: z.literal("balance_transaction"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  type: z
    .enum(BALANCE_TRANSACTION_TYPES)
    .describe(
      "What moved: payment, into a charge's address; payout and fee, out of it; refund, your wallet to a buyer; reversal, undoes a row a reorg removed.",
    ),
  amount: z.string().describe('Signed USDC: "25.00" in, "-24.75" out.'),
  chargeId: z.string().describe("The charge whose money moved."),
  refundId: z.string().nullable().describe("The refund a refund row pays (and its reversal undoes)."),
  invoiceId: z.string().nullable().describe("The invoice a payment pays (money its charge received on time)."),
  chainId: z.number().int().describe("The chain the transfer is on."),
  txHash: z.string().describe("The transaction of the transfer."),
  blockNumber: z.number().int().describe("The block of the transfer."),
  reversesId: z.string().nullable().describe("The row a reversal undoes."),
  x402: z
    .object({
      id: z.string().describe("The settlement (x402pay_…)."),
      payer: z.string().describe("The address that paid."),
      resource: z.string().nullable().describe("What was paid for: the URL the resource server named."),
      description: z.string().nullable().describe("The resource server's description of it."),
    })
    .nullable()
    .describe("For a payment to your x402 address that the facilitator settled: who paid and for what; null otherwise."),
  createdAt: z.string().describe("When the ledger recorded it (the transfer's confirmation)."),
});
export type BalanceTransactionResource = z.infer<typeof BalanceTransactionResource>;

/** What a ledger read includes: the x402 settlement a payment records. */
const WITH_X402 = { x402Payment: { select: { id: true, resource: true, description: true, fromAddress: true } } } as const;

/** A ledger row as the reads return it. */
export type LedgerRow = BalanceTransaction & { x402Payment: { id: string; resource: string | null; description: string | null; fromAddress: string } | null };

/** Shapes a ledger row. */
export function balanceTransactionResource(b: LedgerRow): BalanceTransactionResource {
  const x = b.x402Payment;
  return {
    id: b.id,
    object: "balance_transaction",
    livemode: b.livemode,
    type: b.type,
    amount: formatAmount(b.amount),
    chargeId: b.chargeId,
    refundId: b.refundId,
    invoiceId: b.invoiceId,
    chainId: b.chainId,
    txHash: b.txHash,
    blockNumber: Number(b.blockNumber),
    reversesId: b.reversesId,
    x402: x && { id: x.id, payer: x.fromAddress, resource: x.resource, description: x.description },
    createdAt: b.createdAt.toISOString(),
  };
}

/** The where-clause of a ledger list: this merchant and mode, and the filters. */
function ledgerFilter(scope: Scope, f: BalanceTransactionFilters): P.BalanceTransactionWhereInput {
  return {
    ...inScope(scope),
    ...(f.chargeId && { chargeId: f.chargeId }),
    ...(f.refundId && { refundId: f.refundId }),
    ...(f.type && { type: f.type }),
    ...((f.createdGte || f.createdLt) && { createdAt: { ...(f.createdGte && { gte: f.createdGte }), ...(f.createdLt && { lt: f.createdLt }) } }),
  };
}

/** One page of balance transactions, newest first. */
export async function listBalanceTransactions(
  prisma: Prisma,
  scope: Scope,
  query: BalanceTransactionListQuery,
  end: PageEnd = "newest",
): Promise<Page<LedgerRow>> {
  const { limit, startingAfter, endingBefore, ...filters } = query;
  const where = ledgerFilter(scope, filters);
  return keysetPage(
    "balance_transaction",
    { limit, startingAfter, endingBefore },
    (id) => prisma.balanceTransaction.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.balanceTransaction.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take, include: WITH_X402 }),
    end,
  );
}

/** How many balance transactions match the filters (GraphQL's `totalCount`). */
export function countBalanceTransactions(prisma: Prisma, scope: Scope, filters: BalanceTransactionFilters): Promise<number> {
  return prisma.balanceTransaction.count({ where: ledgerFilter(scope, filters) });
}

/** A charge's balance transactions, oldest first (the charge's own ledger). */
export async function balanceTransactionsOfCharge(prisma: Prisma, scope: Scope, chargeId: string): Promise<LedgerRow[]> {
  return prisma.balanceTransaction.findMany({ where: { chargeId, ...inScope(scope) }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], include: WITH_X402 });
}

/** The columns of the CSV export, in order (its header row). */
export const CSV_COLUMNS = [
  "id",
  "type",
  "amount",
  "chargeId",
  "refundId",
  "invoiceId",
  "chainId",
  "txHash",
  "blockNumber",
  "reversesId",
  "createdAt",
  "livemode",
  "x402Payer",
  "x402Resource",
] as const;

/**
 * Every balance transaction matching `filters` (no cursor: an export is every matching row), newest
 * first, as CSV lines (domain/csv.ts): the header, then one line per row.
 */
export function balanceTransactionsCsv(prisma: Prisma, scope: Scope, filters: BalanceTransactionFilters): AsyncGenerator<string> {
  const where = ledgerFilter(scope, filters);
  return csvLines(
    CSV_COLUMNS,
    (after, take) =>
      prisma.balanceTransaction.findMany({
        where: after ? { AND: [where, olderThan(after)] } : where,
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take,
        include: WITH_X402,
      }),
    (b) => {
      const { x402, ...row } = balanceTransactionResource(b);
      return { ...row, x402Payer: x402?.payer ?? null, x402Resource: x402?.resource ?? null };
    },
  );
}

/** An amount per chain. */
const PerChain = z.array(z.object({ chainId: z.number().int(), amount: z.string() }));

/** GET /v1/balance: the merchant's money in one mode, per chain. */
export const BalanceResource = z.object({
  object: z.literal("balance"),
  livemode: z.boolean(),
  held: PerChain.describe(
    "Confirmed money in your charges' addresses, waiting to be paid out (money completing no charge waits until a clone holds its chain's payout minimum).",
  ),
  onItsWay: PerChain.describe("Payments seen on chain and not yet confirmed, and payments without gas accepted and not yet on chain."),
  paidOut: PerChain.describe("Paid to your wallet so far (net of fees)."),
  fees: PerChain.describe("Protocol fees taken so far."),
  refunded: PerChain.describe("Refunds your wallet paid so far."),
});
export type BalanceResource = z.infer<typeof BalanceResource>;

/** The balance of `scope` (.docs/ledger.md): sums of the ledger per chain, and what is on its way. */
export async function getBalance(prisma: Prisma, scope: Scope): Promise<BalanceResource> {
  const [ledger, held, onItsWay] = await Promise.all([
    prisma.$queryRaw<{ chainId: number; kind: string; amount: string }[]>`
      SELECT b.chain_id AS "chainId", coalesce(o.type, b.type)::text AS kind, sum(b.amount)::text AS amount
      FROM balance_transactions b LEFT JOIN balance_transactions o ON o.id = b.reverses_id
      WHERE b.merchant_id = ${scope.merchantId} AND b.livemode = ${scope.livemode} AND coalesce(o.type, b.type) IN ('payout', 'fee', 'refund')
      GROUP BY 1, 2 ORDER BY 1`,
    prisma.$queryRaw<{ chainId: number; amount: string }[]>`
      SELECT k.chain_id AS "chainId", sum(k.held)::text AS amount FROM clones k JOIN charges c ON c.id = k.charge_id
      WHERE c.merchant_id = ${scope.merchantId} AND c.livemode = ${scope.livemode} AND k.held <> 0 GROUP BY 1 ORDER BY 1`,
    prisma.$queryRaw<{ chainId: number; amount: string }[]>`
      SELECT chain_id AS "chainId", sum(amount)::text AS amount FROM (
        SELECT t.chain_id, t.amount FROM chain_transfers t JOIN charges c ON c.id = t.charge_id
        WHERE c.merchant_id = ${scope.merchantId} AND c.livemode = ${scope.livemode} AND t.kind = 'PAYMENT' AND t.status = 'SEEN'
        UNION ALL
        SELECT a.chain_id, a.value FROM authorizations a JOIN charges c ON c.id = a.charge_id
        WHERE c.merchant_id = ${scope.merchantId} AND c.livemode = ${scope.livemode} AND a.purpose = 'PAYMENT' AND a.ended_at IS NULL AND a.used_tx_hash IS NULL
      ) x GROUP BY 1 ORDER BY 1`,
  ]);
  // A chain whose sum is nothing (a payout a reorg reversed) is left out, as a clone holding nothing is.
  const perChain = (rows: { chainId: number; amount: string }[], sign = 1n) =>
    rows.filter((r) => BigInt(r.amount) !== 0n).map((r) => ({ chainId: r.chainId, amount: formatAmount(sign * BigInt(r.amount)) }));
  const of = (kind: string) => ledger.filter((r) => r.kind === kind);
  return {
    object: "balance",
    livemode: scope.livemode,
    held: perChain(held),
    onItsWay: perChain(onItsWay),
    paidOut: perChain(of("payout"), -1n),
    fees: perChain(of("fee"), -1n),
    refunded: perChain(of("refund"), -1n),
  };
}

/** A balance transaction of `scope`, or 404. */
export async function getBalanceTransaction(prisma: Prisma, scope: Scope, id: string): Promise<LedgerRow> {
  const row = await prisma.balanceTransaction.findFirst({ where: { id, ...inScope(scope) }, include: WITH_X402 });
  if (!row) throw notFound("balance_transaction", id);
  return row;
}
