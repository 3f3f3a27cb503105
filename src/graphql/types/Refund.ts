// `Refund`: money your settlement wallet sends back to a buyer, prepared here and completed when the
// chain shows the transfer, like REST's refunds. Rules live in domain/refunds.ts.
import { cancelRefund, countRefunds, createRefund, getRefund, listRefunds, REFUND_STATUSES, refundResource } from "../../domain/refunds.js";
import { formatAmount } from "../../domain/money.js";
import type { Refund as RefundRow } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageRequest } from "../connection.js";

const RefundStatus = builder.enumType("RefundStatus", {
  description: "AWAITING_ADDRESS: the buyer has not given an address yet (claimUrl). AWAITING_PAYMENT: your wallet has to send it.",
  values: REFUND_STATUSES,
});

const Refund = builder.prismaNode("Refund", {
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode"),
    charge: t.relation("charge"),
    amount: t.string({ resolve: (r) => formatAmount(r.amount) }),
    reason: t.exposeString("reason", { nullable: true }),
    status: t.field({ type: RefundStatus, resolve: (r) => r.status }),
    address: t.exposeString("address", { nullable: true, description: "Where the money goes; null until the buyer gives one at claimUrl." }),
    fromAddress: t.exposeString("fromAddress", { description: "The settlement wallet that must send it." }),
    chainId: t.exposeInt("chainId"),
    txHash: t.string({
      nullable: true,
      description: "The transfer that pays it, once seen on chain; the refund completes when it is confirmed.",
      resolve: (r, _args, ctx) => resource(r, ctx).txHash,
    }),
    claimUrl: t.string({
      nullable: true,
      description: "The page where the buyer gives an address: share it with the buyer only.",
      resolve: (r, _args, ctx) => resource(r, ctx).claimUrl,
    }),
    createdAt: t.string({ resolve: (r) => r.createdAt.toISOString() }),
    completedAt: t.string({ nullable: true, resolve: (r) => r.completedAt?.toISOString() ?? null }),
    cancelledAt: t.string({ nullable: true, resolve: (r) => r.cancelledAt?.toISOString() ?? null }),
  }),
});

function resource(r: RefundRow, ctx: { charges: { paymentBaseUrl: string } }) {
  return refundResource(r, ctx.charges);
}

const CreateRefundInput = builder.inputType("CreateRefundInput", {
  fields: (t) => ({
    amount: t.string({ description: "USDC; by default all that is left to refund." }),
    reason: t.string(),
    address: t.string({ description: "The buyer's address; without it the refund gets a claimUrl for the buyer." }),
  }),
});

builder.queryFields((t) => ({
  refunds: t.connection(
    {
      type: Refund,
      description: "Refunds, newest first.",
      args: { chargeId: t.arg.id(), status: t.arg({ type: RefundStatus }) },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { chargeId: args.chargeId ?? undefined, status: args.status ?? undefined };
        const page = await listRefunds(ctx.prisma, scope, { ...pageRequest(args), ...filters });
        return connectionOf(page, args, () => countRefunds(ctx.prisma, scope, filters));
      },
    },
    countedConnection("Refunds matching the filters."),
  ),
  refund: t.prismaField({
    type: "Refund",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => getRefund(ctx.prisma, ctx.scope(), id),
  }),
}));

builder.prismaObjectField("Charge", "refunds", (t) =>
  t.relation("refunds", { description: "The charge's refunds, oldest first.", query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] } }),
);

builder.mutationFields((t) => ({
  createRefund: t.prismaField({
    type: "Refund",
    description: "Refunds a charge with confirmed money; your settlement wallet pays it, by any means.",
    args: { chargeId: t.arg.id({ required: true }), input: t.arg({ type: CreateRefundInput }) },
    resolve: (_query, _root, { chargeId, input }, ctx) => createRefund(ctx.prisma, ctx.scope(), chargeId, { ...(input ?? {}) }, ctx.charges),
  }),
  cancelRefund: t.prismaField({
    type: "Refund",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => cancelRefund(ctx.prisma, ctx.scope(), id, ctx.charges),
  }),
}));
