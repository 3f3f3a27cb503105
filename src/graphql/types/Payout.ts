// `Payout` and the `payouts` connection: each transaction that paid your charges' money out to your
// wallet, from the ledger. Rules live in domain/payout-list.ts.
import { countPayouts, listPayouts, PAYOUT_STATUSES, type PayoutResource } from "../../domain/payout-list.js";
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
    id: t.exposeID("id", { description: "The id of the payout's first ledger row (btx_…): its cursor." }),
    chainId: t.exposeInt("chainId", { description: "The chain it paid out on." }),
    txHash: t.exposeString("txHash", { description: "The transaction that paid out." }),
    blockNumber: t.exposeInt("blockNumber", { description: "The block it is in." }),
    amount: t.expose("amount", { type: "Amount", description: "USDC paid to your wallet (net of the fee)." }),
    feeAmount: t.expose("feeAmount", { type: "Amount", description: "USDC taken as the protocol fee." }),
    chargeIds: t.exposeIDList("chargeIds", { description: "The charges whose addresses it paid out." }),
    status: t.field({ type: PayoutStatus, description: "Whether it stands.", resolve: (p) => p.status }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: "ISO 8601: when the ledger recorded it (its confirmation)." }),
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
        const page = await listPayouts(ctx.prisma, scope, { ...pageRequest(args), ...filters }, pageEnd(args));
        return connectionOf(page, args, () => countPayouts(ctx.prisma, scope, filters));
      },
    },
    countedConnection("Payouts matching the filters."),
  ),
}));
