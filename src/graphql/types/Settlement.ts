// `Settlement`: one confirmed payout from a charge's clone, whoever sent it.
import type { SettlementResource } from "../../domain/settlements.js";
import { builder } from "../builder.js";

export const Settlement = builder.objectRef<SettlementResource>("Settlement").implement({
  description: "A confirmed payout from the charge's payment contract to the merchant and the fee recipient, whoever sent it.",
  fields: (t) => ({
    txHash: t.exposeString("txHash", { description: "The transaction that paid out." }),
    chainId: t.exposeInt("chainId", { description: "The chain it paid out on." }),
    blockNumber: t.exposeInt("blockNumber", { description: "The block it is in." }),
    amount: t.expose("amount", { type: "Amount", description: "Everything that left the contract: netAmount + feeAmount." }),
    netAmount: t.expose("netAmount", { type: "Amount", description: "Paid to the merchant's settlement wallet." }),
    feeAmount: t.expose("feeAmount", { type: "Amount", description: "Paid to the fee recipient." }),
    confirmedAt: t.expose("confirmedAt", { type: "DateTime", description: "ISO 8601." }),
  }),
});
