// `Settlement`: one confirmed payout from a charge's clone, whoever sent it.
import { describe } from "../../domain/describe.js";
import { SettlementResource } from "../../domain/settlements.js";
import { builder } from "../builder.js";

export const Settlement = builder.objectRef<SettlementResource>("Settlement").implement({
  description: "A confirmed payout from the charge's payment contract to the merchant and the fee recipient, whoever sent it.",
  fields: (t) => ({
    txHash: t.exposeString("txHash", { description: describe(SettlementResource, "txHash") }),
    chainId: t.exposeInt("chainId", { description: describe(SettlementResource, "chainId") }),
    blockNumber: t.exposeInt("blockNumber", { description: describe(SettlementResource, "blockNumber") }),
    amount: t.expose("amount", { type: "Amount", description: describe(SettlementResource, "amount") }),
    netAmount: t.expose("netAmount", { type: "Amount", description: describe(SettlementResource, "netAmount") }),
    feeAmount: t.expose("feeAmount", { type: "Amount", description: describe(SettlementResource, "feeAmount") }),
    confirmedAt: t.expose("confirmedAt", { type: "DateTime", description: describe(SettlementResource, "confirmedAt") }),
  }),
});
