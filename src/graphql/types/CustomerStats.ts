// `CustomerStats`: aggregates over a customer's charges and invoices.
import { type CustomerStats as Stats, statsResource } from "../../domain/customers.js";
import { builder } from "../builder.js";

export const CustomerStats = builder.objectRef<Stats>("CustomerStats").implement({
  description: "Counts and money over a customer's charges and invoices.",
  fields: (t) => ({
    invoiceCount: t.exposeInt("invoiceCount", { description: "The customer's invoices past DRAFT." }),
    chargeCount: t.exposeInt("chargeCount", { description: "All charges linked to the customer." }),
    totalSpent: t.field({
      type: "Amount",
      description: "Sum received on COMPLETED charges, a USDC decimal string.",
      resolve: (s) => statsResource(s).totalSpent,
    }),
  }),
});
