// The request contract of refunds: the body of POST /v1/charges/:id/refunds (GraphQL's createRefund
// input), the query of GET /v1/refunds and the claim page's form. The doors parse a request with
// these (parseInput) and hand the domain the typed result. (A refund's authorization is a transfer
// authorization like a charge's: its body is domain/authorizations.ts's authorizationSchema.) The
// statuses live here, as the list's filter names them; domain/refunds.ts hands them on.
import { z } from "zod";
import { pageParams } from "./paging.js";
import { amountInput, evmAddress } from "./validation.js";

export const REFUND_STATUSES = ["AWAITING_ADDRESS", "AWAITING_PAYMENT", "COMPLETED", "CANCELLED"] as const;

/** The body of POST /v1/charges/:id/refunds. */
export const createSchema = z.strictObject(
  {
    amount: amountInput("5.00").optional(),
    reason: z.string().trim().min(1).max(500).optional(),
    address: evmAddress().optional(),
    chainId: z
      .number({ error: "must be a chain id (an integer)" })
      .int("must be a chain id (an integer)")
      .positive("must be a chain id (an integer)")
      .optional()
      .describe("The chain to refund on: one where the charge's money arrived. Needed only when money is left on several."),
  },
  { error: "must be a JSON object" },
);

/** The query of GET /v1/refunds: a keyset page and its filters (GraphQL's connection). */
export const listSchema = z.strictObject({
  ...pageParams,
  chargeId: z.string().min(1).max(100).optional(),
  status: z.enum(REFUND_STATUSES, { error: `must be one of ${REFUND_STATUSES.join(", ")}` }).optional(),
});

/** The list's filters alone: GraphQL's count. */
export const filterSchema = listSchema.pick({ chargeId: true, status: true });

/** What the claim page posts, besides its token. */
export const claimSchema = z.strictObject({ address: evmAddress(), confirmAddress: z.string() }, { error: "must be a JSON object" });

/** A refund to create, parsed (createSchema). */
export type RefundRequest = z.output<typeof createSchema>;
/** The query of GET /v1/refunds, parsed (listSchema). */
export type RefundListQuery = z.output<typeof listSchema>;
/** The list's filters, parsed (filterSchema). */
export type RefundFilters = z.output<typeof filterSchema>;
/** The claim page's address, typed twice, parsed (claimSchema). */
export type RefundClaim = z.output<typeof claimSchema>;
