// A payment as the API shows it, in a module of its own: charges/resource.ts declares it (the charge
// events that report payments carry them) and payments.ts shapes it, and payments.ts already imports charges/.
import { z } from "zod";

/** A payment as events and the hosted page show it. */
export const PaymentResource = z.object({
  txHash: z.string().describe("The transaction of the transfer."),
  logIndex: z.number().int().describe("The transfer's log index in its transaction."),
  blockNumber: z.number().int().describe("The block of the transfer."),
  chainId: z.number().int(),
  from: z.string().describe("The sender: a hint only, often an exchange's hot wallet rather than the buyer's own."),
  amount: z.string().describe('USDC, e.g. "25.00".'),
  status: z.enum(["pending", "confirmed"]).describe("Either pending (waiting for confirmations) or confirmed (counted)."),
});
export type PaymentResource = z.infer<typeof PaymentResource>;
