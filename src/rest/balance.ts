// REST ledger (.docs/ledger.md): balance transactions, as JSON pages or one CSV for accountants, and
// the balance per chain. Rules live in domain/balance-transactions.ts.
import type { FastifyInstance } from "fastify";
import {
  BalanceResource,
  BalanceTransactionResource,
  balanceTransactionResource,
  balanceTransactionsCsv,
  getBalance,
  getBalanceTransaction,
  listBalanceTransactions,
  listSchema,
} from "../domain/balance-transactions.js";
import { parseInput } from "../domain/validation.js";
import { sendCsv } from "../http/csv.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Balance";

/** Registers the ledger endpoints. */
export function balanceRoutes(app: FastifyInstance, { prisma }: RestDeps): void {
  const list = {
    group: "list",
    doc: {
      operationId: "listBalanceTransactions",
      summary: "List balance transactions (the ledger), newest first: chargeId, refundId, type, createdGte, createdLt; format=csv exports every page",
      description:
        "The ledger, newest first, paged by cursor: one immutable row per movement of money (payment, fee, payout, refund, reversal), filtered by `chargeId`, `refundId`, `type` and creation time. `format=csv` answers every matching row as one CSV file.",
      tag,
      query: listSchema,
      ok: { 200: listOf(BalanceTransactionResource) },
      alsoAs: "text/csv",
    },
  } as const;
  app.get("/v1/balance_transactions", { config: list }, async (req, reply) => {
    const scope = scopeOf(req);
    if (parseInput(listSchema, req.query).format === "csv") {
      // The query is checked before the stream starts, so its errors are still JSON bodies.
      return sendCsv(reply, "balance_transactions", scope.livemode, balanceTransactionsCsv(prisma, scope, req.query));
    }
    const { data, hasMore } = await listBalanceTransactions(prisma, scope, req.query);
    return { object: "list", data: data.map(balanceTransactionResource), hasMore };
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
