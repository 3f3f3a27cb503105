// The request contract of sweeps: GraphQL's sweepCharge arguments and the CLI's `stablegate sweep`.
// The doors parse a request with it (parseInput) and hand the domain the typed result.
import { z } from "zod";

/** What a sweep asks: the token (an address, or "native"/"eth" for the chain's coin) and the chain (the charge's by default). */
export const sweepSchema = z.strictObject(
  {
    token: z.string().min(1).max(100).describe('A token address, or "native" (also "eth") for the chain\'s own coin.'),
    chainId: z.number().int().positive().optional().describe("The chain to sweep on; the charge's picked chain by default."),
  },
  { error: "must be a JSON object" },
);

/** A sweep asked for, parsed (sweepSchema). */
export type SweepRequest = z.output<typeof sweepSchema>;
