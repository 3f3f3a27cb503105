// The request contract of the ledger's summary: GraphQL's ledgerSummary arguments. The door parses a
// request with it (parseInput) and hands the domain the typed result.
import { z } from "zod";
import { instantParam } from "./validation.js";

/** The period summed: [createdGte, createdLt), each optional. */
export const summarySchema = z.strictObject({
  createdGte: instantParam().optional(),
  createdLt: instantParam().optional(),
});

/** A summary's period, parsed (summarySchema). */
export type LedgerSummaryQuery = z.output<typeof summarySchema>;
