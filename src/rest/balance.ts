// REST ledger (.docs/ledger.md): balance transactions, as JSON pages or one CSV for accountants, and
// the balance per chain. Rules live in domain/balance-transactions.ts.
import type { FastifyInstance } from "fastify";
import {
  BalanceResource,
  BalanceTransactionResource,
  balanceTransactionResource,
  balanceTransactionsCsv,
  CSV_COLUMNS,
  getBalance,
  getBalanceTransaction,
  listBalanceTransactions,
} from "../domain/balance-transactions.js";
import { filterSchema, listSchema } from "../domain/balance-transaction-requests.js";
import { parseInput } from "../domain/validation.js";
import { sendCsv } from "../http/csv.js";
import { legacyFormat } from "./legacy-format.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Balance";

/** Registers the ledger endpoints. */
export function balanceRoutes(app: FastifyInstance, { prisma }: RestDeps): void {
  const list = {
    group: "list",
    doc: {
      operationId: "listBalanceTransactions",
      summary: "List balance transactions (the ledger), newest first: chargeId, refundId, type, createdGte, createdLt",
      description:
        "The ledger, newest first, paged by cursor: one immutable row per movement of money (payment, fee, payout, refund, reversal), filtered by `chargeId`, `refundId`, `type` and creation time. Every matching row as one CSV file: `GET /v1/balance_transactions/export.csv`.",
      tag,
      query: listSchema,
      ok: { 200: listOf(BalanceTransactionResource) },
    },
  } as const;
  app.get("/v1/balance_transactions", { config: list }, async (req, reply) => {
    const scope = scopeOf(req);
    const asked = legacyFormat(req.query, listSchema);
    // The query is checked before the stream starts, so its errors are still JSON bodies.
    if (asked.csv)
      return sendCsv(reply, "balance_transactions", scope.livemode, balanceTransactionsCsv(prisma, scope, parseInput(filterSchema, asked.filters)));
    const { data, hasMore } = await listBalanceTransactions(prisma, scope, parseInput(listSchema, asked.query));
    return { object: "list", data: data.map(balanceTransactionResource), hasMore };
  });

  const exportCsv = {
    group: "list",
    doc: {
      operationId: "exportBalanceTransactions",
      summary: "Every balance transaction matching the list's filters, as one CSV file for accountants",
      description:
        "Every matching row of the ledger, newest first, as one CSV file (`balance_transactions_test.csv` or `balance_transactions_live.csv`): a header row (`id,type,amount,…`), then one line per row, with the list's filters (`chargeId`, `refundId`, `type`, `createdGte` inclusive, `createdLt` exclusive) and no paging. A bad filter is a JSON 400, before any CSV.",
      tag,
      query: filterSchema,
      ok: { 200: listOf(BalanceTransactionResource) },
      file: { type: "text/csv", example: `${CSV_COLUMNS.join(",")}\r\n` },
    },
  } as const;
  // A static path: Fastify routes it before /v1/balance_transactions/:id.
  app.get("/v1/balance_transactions/export.csv", { config: exportCsv }, async (req, reply) => {
    const scope = scopeOf(req);
    return sendCsv(reply, "balance_transactions", scope.livemode, balanceTransactionsCsv(prisma, scope, parseInput(filterSchema, req.query)));
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getBalanceTransaction",
      summary: "Retrieve a balance transaction",
      description: "One row of the ledger.",
      tag,
      ok: { 200: BalanceTransactionResource },
    },
  } as const;
  app.get<{ Params: { id: string } }>("/v1/balance_transactions/:id", { config: retrieve }, async (req) => {
    return balanceTransactionResource(await getBalanceTransaction(prisma, scopeOf(req), req.params.id));
  });

  const balance = {
    group: "read",
    doc: {
      operationId: "getBalance",
      summary: "Your money per chain: held in charges' addresses, on its way, paid out, fees and refunds",
      description: "The ledger summed per chain: money held in your charges' addresses, on its way, paid out to your wallet, taken in fees, and refunded.",
      tag,
      ok: { 200: BalanceResource },
    },
  } as const;
  app.get("/v1/balance", { config: balance }, async (req) => getBalance(prisma, scopeOf(req)));
}
