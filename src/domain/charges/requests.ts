// The request contract of charges: the body of POST /v1/charges (GraphQL's createCharge input) and
// the query of GET /v1/charges and its export. The doors parse a request with these (parseInput)
// and hand the domain the typed result.
import { z } from "zod";
import { pageParams } from "../paging.js";
import { metadataInput } from "../metadata.js";
import { amountInput, instantParam, integerField, integerParam } from "../validation.js";
import { CHARGE_STATUSES } from "./lifecycle.js";

// Printable: no control, format or line/paragraph separator characters.
const printable = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

const redirectUrl = z.string().max(2048).nullable().optional();

/** The longest order id: also the longest path parameter any route takes. */
export const ORDER_ID_MAX_LENGTH = 200;

/** The minutes a charge gives its buyer to pay when the request names none (expiresInMinutes). */
export const CHARGE_MINUTES_DEFAULT = 30;

/** The body of POST /v1/charges (and the createCharge mutation's input). */
export const createSchema = z.strictObject(
  {
    orderId: z.string().min(1).max(ORDER_ID_MAX_LENGTH).regex(printable, "must contain only printable characters"),
    amount: amountInput("25.00"),
    description: z.string().max(1000).nullable().optional(),
    customerId: z.string().min(1).max(100).nullable().optional(),
    metadata: metadataInput.optional(),
    successUrl: redirectUrl,
    cancelUrl: redirectUrl,
    expiresInMinutes: integerField(5, 10_080).default(CHARGE_MINUTES_DEFAULT),
  },
  { error: "must be a JSON object" },
);

/** What `search` finds (charges/search.ts), as the API documents it. */
export const SEARCH_DESCRIPTION =
  'The start of a charge id, an order id, a clone address, a transaction hash (of a payment, a payout or a refund) or a customer\'s email (any case); a hash shortened as "0x1234abcd…89abcdef"; or an exact amount such as "12.50".';

const filterSchema = {
  status: z.enum(CHARGE_STATUSES, { error: `must be one of ${CHARGE_STATUSES.join(", ")}` }).optional(),
  needsReview: z
    .enum(["true", "false"], { error: "must be true or false" })
    .optional()
    .describe("Only charges that need review (true) or that do not (false)."),
  customerId: z.string().min(1).max(100).optional(),
  search: z.string().trim().min(1).max(100).optional().describe(SEARCH_DESCRIPTION),
  createdGte: instantParam().optional().describe("Only charges created at or after this instant (ISO 8601)."),
  createdLt: instantParam().optional().describe("Only charges created before this instant (ISO 8601)."),
};

/** The query of GET /v1/charges: numbered pages (`page`, the contract's) or cursors (`startingAfter`/`endingBefore`), not both. */
export const listSchema = z.strictObject({
  page: integerParam(1, 100_000).optional().describe("Numbered paging: 1 (the default) is the newest page. Not with startingAfter or endingBefore."),
  ...pageParams,
  ...filterSchema,
});
/** The filters alone: what the CSV export (domain/charges-csv.ts) and GraphQL's counts take. */
export const filtersOnly = z.strictObject(filterSchema);

/** One keyset page and its filters: GraphQL's connections (REST's list given a cursor is the same request). */
export const pageSchema = z.strictObject({ ...pageParams, ...filterSchema });

/** A charge to create, parsed (createSchema). */
export type ChargeRequest = z.output<typeof createSchema>;
/** The query of GET /v1/charges, parsed (listSchema). */
export type ChargeListQuery = z.output<typeof listSchema>;
/** A keyset page and its filters, parsed (pageSchema). */
export type ChargePageQuery = z.output<typeof pageSchema>;
/** A list's filters, parsed (filtersOnly). */
export type ChargeFilters = z.output<typeof filtersOnly>;
