// The request contract of the ledger's list: the query of GET /v1/balance_transactions (GraphQL's
// connection) and of its CSV export. The doors parse a request with these (parseInput) and hand the
// domain the typed result.
import { z } from "zod";
import { pageParams } from "./paging.js";
import { instantParam } from "./validation.js";

export const BALANCE_TRANSACTION_TYPES = ["payment", "fee", "payout", "refund", "reversal"] as const;

const filterShape = {
  chargeId: z.string().min(1).max(100).optional(),
  refundId: z.string().min(1).max(100).optional(),
  type: z.enum(BALANCE_TRANSACTION_TYPES, { error: `must be one of ${BALANCE_TRANSACTION_TYPES.join(", ")}` }).optional(),
  createdGte: instantParam().optional().describe("Only rows recorded at or after this instant."),
  createdLt: instantParam().optional().describe("Only rows recorded before this instant."),
};

/** The query of GET /v1/balance_transactions. */
export const listSchema = z.strictObject({
  ...pageParams,
  ...filterShape,
});
/** The filters alone: what the CSV export and GraphQL's count take. */
export const filterSchema = z.strictObject(filterShape);

/** The query of GET /v1/balance_transactions, parsed (listSchema). */
export type BalanceTransactionListQuery = z.output<typeof listSchema>;
/** The ledger's filters, parsed (filterSchema). */
export type BalanceTransactionFilters = z.output<typeof filterSchema>;
