// `Payout` and the `payouts` connection: each transaction that paid your charges' money out to your
// wallet, from the ledger. Rules live in domain/payout-list.ts.
import { describe } from "../../domain/describe.js";
import { countPayouts, listPayouts, PAYOUT_STATUSES, PayoutResource } from "../../domain/payout-list.js";
import { filterSchema, listSchema } from "../../domain/payout-requests.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

const PayoutStatus = builder.enumType("PayoutStatus", {
  description: "Whether a payout stands.",
  values: {
    PAID: { value: PAYOUT_STATUSES[0], description: "Confirmed and standing: the money is in your wallet." },
    REVERSED: { value: PAYOUT_STATUSES[1], description: "A reorg deeper than the confirmations took it away; the ledger has reversals." },
  },
});

export const Payout = builder.objectRef<PayoutResource>("Payout").implement({
  description: "One transaction that paid money out of your charges' addresses on one chain (to your wallet and the fee recipient), whoever sent it.",
  fields: (t) => ({
    id: t.exposeID("id", { description: describe(PayoutResource, "id") }),
    chainId: t.exposeInt("chainId", { description: describe(PayoutResource, "chainId") }),
    txHash: t.exposeString("txHash", { description: describe(PayoutResource, "txHash") }),
    blockNumber: t.exposeInt("blockNumber", { description: describe(PayoutResource, "blockNumber") }),
    amount: t.expose("amount", { type: "Amount", description: describe(PayoutResource, "amount") }),
    feeAmount: t.expose("feeAmount", { type: "Amount", description: describe(PayoutResource, "feeAmount") }),
    chargeIds: t.exposeIDList("chargeIds", { description: describe(PayoutResource, "chargeIds") }),
    status: t.field({ type: PayoutStatus, description: describe(PayoutResource, "status"), resolve: (p) => p.status }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: describe(PayoutResource, "createdAt") }),
  }),
});

builder.queryFields((t) => ({
  payouts: t.connection(
    {
      type: Payout,
      description: "Your payouts in this mode, newest first, from the ledger (once confirmed).",
      args: {
        createdGte: t.arg.string({ description: "ISO 8601: payouts recorded at or after this instant." }),
        createdLt: t.arg.string({ description: "ISO 8601: payouts recorded before this instant." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { createdGte: args.createdGte ?? undefined, createdLt: args.createdLt ?? undefined };
        const page = await listPayouts(ctx.prisma, scope, parseInput(listSchema, { ...pageRequest(args), ...filters }), pageEnd(args));
        return connectionOf(page, args, () => countPayouts(ctx.prisma, scope, parseInput(filterSchema, filters)));
      },
    },
    countedConnection("Payouts matching the filters."),
  ),
}));
