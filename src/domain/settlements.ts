// Settlements: the payouts the chain made from a charge's clones, whoever sent them (our relayer, a
// bot, the merchant): one per transaction and chain, the net amount to the merchant's wallet and the
// fee. They are derived from the ledger's payout and fee rows that stand (domain/ledger.ts), and a
// charge keeps them, oldest first, in its `settlements` column, in the form stored here.
import { z } from "zod";
import { jsonColumn } from "./json-columns.js";
import { formatAmount } from "./money.js";

/** A confirmed settlement as a charge stores it (amounts as base-unit strings). */
const StoredSettlement = z.object({
  txHash: z.string(),
  chainId: z.number().int(),
  blockNumber: z.number().int(),
  netAmount: z.string().regex(/^\d+$/),
  feeAmount: z.string().regex(/^\d+$/),
  confirmedAt: z.string(),
});
export type StoredSettlement = z.infer<typeof StoredSettlement>;
const StoredSettlements = z.array(StoredSettlement);

/** A settlement as the API shows it. */
export const SettlementResource = z.object({
  txHash: z.string().describe("The transaction that paid out (anyone's)."),
  chainId: z.number().int().describe("The chain it paid out on."),
  blockNumber: z.number().int().describe("The block it is in."),
  amount: z.string().describe("Everything that left the payment contract: netAmount + feeAmount."),
  netAmount: z.string().describe("Paid to the merchant's settlement wallet."),
  feeAmount: z.string().describe("Paid to the fee recipient."),
  confirmedAt: z.string().describe("When it was confirmed."),
});
export type SettlementResource = z.infer<typeof SettlementResource>;

/** The confirmed settlements stored on a charge. */
export function storedSettlements(charge: { settlements: unknown }): StoredSettlement[] {
  return jsonColumn(StoredSettlements, charge.settlements, "charges.settlements");
}

/** Shapes a stored settlement. */
export function settlementResource(s: StoredSettlement): SettlementResource {
  const net = BigInt(s.netAmount);
  const fee = BigInt(s.feeAmount);
  return {
    txHash: s.txHash,
    chainId: s.chainId,
    blockNumber: s.blockNumber,
    amount: formatAmount(net + fee),
    netAmount: formatAmount(net),
    feeAmount: formatAmount(fee),
    confirmedAt: s.confirmedAt,
  };
}
