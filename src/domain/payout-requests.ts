// The request contract of the payouts' list: the query of GraphQL's `payouts` connection. The door
// parses a request with these (parseInput) and hands the domain the typed result.
import { z } from "zod";
import { pageParams } from "./paging.js";
import { instantParam } from "./validation.js";

/** A page of payouts and its window of time. */
export const listSchema = z.strictObject({
  ...pageParams,
  createdGte: instantParam().optional(),
  createdLt: instantParam().optional(),
});

/** The window alone: GraphQL's count. */
export const filterSchema = listSchema.pick({ createdGte: true, createdLt: true });

/** A page of payouts, parsed (listSchema). */
export type PayoutListQuery = z.output<typeof listSchema>;
/** The payouts' window of time, parsed (filterSchema). */
export type PayoutFilters = z.output<typeof filterSchema>;
