// What a merchant puts in its routes' x402 requirements (`GET /v1/x402`, GraphQL `x402`): its x402
// address for the key's mode, the facilitator's URL, and for each chain of the mode the network, the
// USDC contract and its EIP-712 domain (`extra`), and the least an x402 payment settles for there.
import { getAddress } from "ethers";
import { z } from "zod";
import { formatAmount } from "../money.js";
import type { Scope } from "../scope.js";
import { x402Anchor } from "./anchors.js";
import { networkOf, x402Minimum, type X402Deps } from "./verify.js";

/** The x402 object. */
export const X402Resource = z.object({
  object: z.literal("x402"),
  livemode: z.boolean().describe("True in live mode, false in test mode."),
  payTo: z.string().describe("Your x402 address for this mode: every route's `payTo`. It changes with your settlement wallet or fee."),
  facilitatorUrl: z
    .string()
    .describe("The facilitator to point the x402 middleware at (HTTPFacilitatorClient's `url`), with this API key as its Bearer token."),
  accepts: z
    .array(
      z.object({
        scheme: z.literal("exact"),
        network: z.string().describe('A CAIP-2 chain id, e.g. "eip155:8453".'),
        asset: z.string().describe("The USDC contract on that chain."),
        extra: z.object({ name: z.string(), version: z.string() }).describe("USDC's EIP-712 domain there, as the exact scheme's `extra`."),
        minAmount: z.string().describe('The least a payment settles for there, in USDC ("0.01"): X402_MIN_AMOUNT, else the chain\'s payout minimum.'),
      }),
    )
    .describe("What a route may ask for, one entry per chain enabled for the mode."),
});
export type X402Resource = z.infer<typeof X402Resource>;

/** The scope's x402 object (its address made on first use); a chain whose token cannot be read now is left out. */
export async function x402Account(deps: X402Deps, scope: Scope, publicUrl: string): Promise<X402Resource> {
  const anchor = await x402Anchor(deps.prisma, scope, deps.factory);
  const chains = deps.chains.forMode(scope.livemode);
  const domains = await Promise.all(
    chains.map(
      (c) =>
        deps
          .readers(c.chainId)
          ?.domain()
          .catch(() => null) ?? null,
    ),
  );
  return {
    object: "x402",
    livemode: scope.livemode,
    payTo: anchor.address,
    facilitatorUrl: `${publicUrl.replace(/\/$/, "")}/x402`,
    accepts: chains.flatMap((c, i) => {
      const domain = domains[i];
      if (!domain) return [];
      const { name, version } = domain;
      return [
        {
          scheme: "exact" as const,
          network: networkOf(c.chainId),
          asset: getAddress(c.usdc),
          extra: { name, version },
          minAmount: formatAmount(x402Minimum(deps, c)),
        },
      ];
    }),
  };
}
