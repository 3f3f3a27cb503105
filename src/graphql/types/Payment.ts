// `Charge.payments`: the USDC transfers into a charge's clone, as its merchant sees them
// (domain/payments.ts).
import { type PaymentResource, paymentsOfCharges } from "../../domain/payments.js";
import { builder } from "../builder.js";

const Payment = builder.objectRef<PaymentResource>("Payment").implement({
  description: "A USDC transfer into the charge's payment contract.",
  fields: (t) => ({
    txHash: t.exposeString("txHash", { description: "The transaction of the transfer." }),
    logIndex: t.exposeInt("logIndex", { description: "The transfer's log index in its transaction." }),
    blockNumber: t.exposeInt("blockNumber", { description: "The block of the transfer." }),
    from: t.exposeString("from", { description: "The sender: a hint only, often an exchange's wallet rather than the buyer's own." }),
    amount: t.expose("amount", { type: "Amount", description: "USDC." }),
    status: t.exposeString("status", { description: "Either pending (waiting for confirmations) or confirmed (counted)." }),
  }),
});

builder.prismaObjectField("Charge", "payments", (t) =>
  t.loadableList({
    type: Payment,
    description: "Transfers into the charge's contract, in chain order.",
    // Batched, not cached: a subscription's context outlives the rows it reads.
    loaderOptions: { cache: false },
    load: async (ids: string[], ctx) => {
      const byCharge = await paymentsOfCharges(ctx.prisma, ctx.scope(), ids);
      return ids.map((id) => byCharge.get(id) ?? []);
    },
    resolve: (charge) => charge.id,
  }),
);
