// `Settlement`: one confirmed payout from a charge's clone (a Flushed event), whoever sent it.
import type { SettlementResource } from "../../domain/settlements.js";
import { builder } from "../builder.js";

export const Settlement = builder.objectRef<SettlementResource>("Settlement").implement({
  description: "A confirmed payout from the charge's payment contract to the merchant and the fee recipient, by whoever called its public flush.",
  fields: (t) => ({
    txHash: t.exposeString("txHash", { description: "The transaction that paid out." }),
    blockNumber: t.exposeInt("blockNumber"),
    amount: t.exposeString("amount", { description: "Everything that left the contract: netAmount + feeAmount." }),
    netAmount: t.exposeString("netAmount", { description: "Paid to the merchant's settlement wallet." }),
    feeAmount: t.exposeString("feeAmount", { description: "Paid to the fee recipient." }),
    confirmedAt: t.exposeString("confirmedAt", { description: "ISO 8601." }),
  }),
});
