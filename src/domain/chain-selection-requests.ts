// The request contract of picking a charge's chain: the body of POST /v1/public/charges/:id/chain,
// the hosted page's chain form and GraphQL's selectPaymentChain. The doors parse a request with it
// (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { integerTypeError } from "./validation.js";

/** The body of POST /v1/public/charges/:id/chain and the hosted page's chain form. */
export const selectSchema = z.strictObject(
  { chainId: z.number({ error: integerTypeError("must be a chain id (a number)") }).int() },
  { error: "must be a JSON object" },
);

/** A chain to pay on, parsed (selectSchema). */
export type SelectChainRequest = z.output<typeof selectSchema>;
