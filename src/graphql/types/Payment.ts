// `Charge.payments`: the USDC transfers into a charge's clone, as its merchant sees them
// (domain/payments.ts).
import { describe } from "../../domain/describe.js";
import { PaymentResource } from "../../domain/payment-schema.js";
import { paymentsOfCharges } from "../../domain/payments.js";
import { builder } from "../builder.js";

const Payment = builder.objectRef<PaymentResource>("Payment").implement({
  description: "A USDC transfer into the charge's payment contract.",
  fields: (t) => ({
    txHash: t.exposeString("txHash", { description: describe(PaymentResource, "txHash") }),
    logIndex: t.exposeInt("logIndex", { description: describe(PaymentResource, "logIndex") }),
    blockNumber: t.exposeInt("blockNumber", { description: describe(PaymentResource, "blockNumber") }),
    from: t.exposeString("from", { description: describe(PaymentResource, "from") }),
    amount: t.expose("amount", { type: "Amount", description: describe(PaymentResource, "amount") }),
    status: t.exposeString("status", { description: describe(PaymentResource, "status") }),
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
