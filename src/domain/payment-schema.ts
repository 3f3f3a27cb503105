// A payment as the API shows it, in a module of its own: charges/resource.ts declares it (the charge
// events that report payments carry them) and payments.ts shapes it, and payments.ts already imports charges/.
import { z } from "zod";

/** A payment as events and the hosted page show it. */
export const PaymentResource = z.object({
  txHash: z.string(),
  logIndex: z.number().int(),
  blockNumber: z.number().int(),
  chainId: z.number().int(),
  from: z.string().describe("The sender: a hint only, often an exchange's hot wallet rather than the buyer's own."),
  amount: z.string().describe('USDC, e.g. "25.00".'),
  status: z.enum(["pending", "confirmed"]),
});
export type PaymentResource = z.infer<typeof PaymentResource>;
