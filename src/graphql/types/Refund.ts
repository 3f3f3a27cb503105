// `Refund`: money your settlement wallet sends back to a buyer, prepared here and completed when the
// chain shows the transfer, like REST's refunds. Rules live in domain/refunds.ts.
import { describe } from "../../domain/describe.js";
import { createSchema, filterSchema, listSchema } from "../../domain/refund-requests.js";
import {
  cancelRefund,
  countRefunds,
  createRefund,
  getRefund,
  listRefunds,
  REFUND_STATUSES,
  type RefundableMoney as Refundable,
  refundableMoney,
  refundResource,
  sendRefundClaim,
  RefundResource,
} from "../../domain/refunds.js";
import { parseInput } from "../../domain/validation.js";
import type { Refund as RefundRow } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

const STATUS_DESCRIPTIONS: Record<(typeof REFUND_STATUSES)[number], string> = {
  AWAITING_ADDRESS: "The buyer has not given an address yet: share the claimUrl with them.",
  AWAITING_PAYMENT: "Your settlement wallet has to send it to the address.",
  COMPLETED: "Your wallet's transfer to the buyer is confirmed.",
  CANCELLED: "You cancelled it.",
};

const RefundStatus = builder.enumType("RefundStatus", {
  description: "AWAITING_ADDRESS: the buyer has not given an address yet (claimUrl). AWAITING_PAYMENT: your wallet has to send it.",
  values: Object.fromEntries(REFUND_STATUSES.map((s) => [s, { description: STATUS_DESCRIPTIONS[s] }])),
});

const Refund = builder.prismaNode("Refund", {
  description: "Money your settlement wallet sends back to a buyer: prepared here, completed when the chain shows the transfer.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(RefundResource, "livemode") }),
    charge: t.relation("charge", { description: "The charge refunded." }),
    amount: t.field({ type: "Amount", description: describe(RefundResource, "amount"), resolve: (r) => r.amount }),
    reason: t.exposeString("reason", { nullable: true, description: describe(RefundResource, "reason") }),
    status: t.field({ type: RefundStatus, description: describe(RefundResource, "status"), resolve: (r) => r.status }),
    address: t.exposeString("address", { nullable: true, description: describe(RefundResource, "address") }),
    fromAddress: t.exposeString("fromAddress", { description: describe(RefundResource, "fromAddress") }),
    chainId: t.exposeInt("chainId", { description: describe(RefundResource, "chainId") }),
    txHash: t.string({
      nullable: true,
      description: describe(RefundResource, "txHash"),
      resolve: (r, _args, ctx) => resource(r, ctx).txHash,
    }),
    claimUrl: t.string({
      nullable: true,
      description: describe(RefundResource, "claimUrl"),
      resolve: (r, _args, ctx) => resource(r, ctx).claimUrl,
    }),
    createdAt: t.field({ type: "DateTime", description: describe(RefundResource, "createdAt"), resolve: (r) => r.createdAt }),
    completedAt: t.field({ type: "DateTime", nullable: true, description: describe(RefundResource, "completedAt"), resolve: (r) => r.completedAt }),
    cancelledAt: t.field({ type: "DateTime", nullable: true, description: describe(RefundResource, "cancelledAt"), resolve: (r) => r.cancelledAt }),
  }),
});

function resource(r: RefundRow, ctx: { charges: { paymentBaseUrl: string } }) {
  return refundResource(r, ctx.charges);
}

const CreateRefundInput = builder.inputType("CreateRefundInput", {
  description: "A new refund; every field is optional.",
  fields: (t) => ({
    amount: t.string({ description: "USDC; by default all that is left to refund." }),
    reason: t.string({ description: "Your reason, kept with the refund." }),
    address: t.string({
      description:
        "The buyer's address; without it the refund gets a claimUrl for the buyer. A charge's deposit address (this one's included), a factory or token contract, the zero address and the charge's settlement wallet are refused (parameter_invalid).",
    }),
    chainId: t.int({
      description: "The chain to refund on: one where the charge's money arrived (Charge.refundable). Needed only when money is left on several.",
    }),
  }),
});

builder.queryFields((t) => ({
  refunds: t.connection(
    {
      type: Refund,
      description: "Refunds, newest first.",
      args: {
        chargeId: t.arg.id({ description: "Only this charge's refunds." }),
        status: t.arg({ type: RefundStatus, description: "Only refunds with this status." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { chargeId: args.chargeId ?? undefined, status: args.status ?? undefined };
        const page = await listRefunds(ctx.prisma, scope, parseInput(listSchema, { ...pageRequest(args), ...filters }), pageEnd(args));
        return connectionOf(page, args, () => countRefunds(ctx.prisma, scope, parseInput(filterSchema, filters)));
      },
    },
    countedConnection("Refunds matching the filters."),
  ),
  refund: t.prismaField({
    type: "Refund",
    description: "A refund by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The refund's id (ref_…)." }) },
    resolve: (query, _root, { id }, ctx) => getRefund(ctx.prisma, ctx.scope(), id, query),
  }),
}));

builder.prismaObjectField("Charge", "refunds", (t) =>
  t.relation("refunds", { description: "The charge's refunds, oldest first.", query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] } }),
);

const RefundableMoney = builder.objectRef<Refundable>("RefundableMoney").implement({
  description: "A charge's confirmed money on one chain, and what is left to refund there.",
  fields: (t) => ({
    chainId: t.exposeInt("chainId", { description: "The chain the money arrived on: a refund of it is made there." }),
    received: t.field({ type: "Amount", description: "USDC confirmed on that chain.", resolve: (m) => m.received }),
    left: t.field({
      type: "Amount",
      description:
        "USDC left to refund on that chain: received less its refunds that are not cancelled, never more than the charge's amountRefundable (the most one refund there may ask).",
      resolve: (m) => m.limit,
    }),
  }),
});

builder.prismaObjectField("Charge", "refundable", (t) =>
  t.field({
    type: [RefundableMoney],
    description: "Per chain where its confirmed money arrived, what is left to refund: a refund is made on one of these chains (createRefund's chainId).",
    resolve: (charge, _args, ctx) => refundableMoney(ctx.prisma, charge.id),
  }),
);

builder.mutationFields((t) => ({
  createRefund: t.prismaField({
    type: "Refund",
    description: "Refunds a charge with confirmed money; your settlement wallet pays it, by any means.",
    args: {
      chargeId: t.arg.id({ required: true, description: "The charge to refund (chrg_…)." }),
      input: t.arg({ type: CreateRefundInput, description: "The amount, reason and address; all optional." }),
    },
    resolve: (_query, _root, { chargeId, input }, ctx) =>
      createRefund(ctx.prisma, ctx.scope(), chargeId, parseInput(createSchema, { ...(input ?? {}) }), ctx.charges, ctx.chains),
  }),
  cancelRefund: t.prismaField({
    type: "Refund",
    description: "Cancels a refund whose transfer is not on its way yet.",
    args: { id: t.arg.id({ required: true, description: "The refund's id (ref_…)." }) },
    resolve: (_query, _root, { id }, ctx) => cancelRefund(ctx.prisma, ctx.scope(), id, ctx.charges),
  }),
  sendRefundClaim: t.prismaField({
    type: "Refund",
    description:
      "Emails the claim link of a refund waiting for its address to its charge's buyer (refund_not_sendable for any other refund, or a charge without an email).",
    args: { id: t.arg.id({ required: true, description: "The refund's id (ref_…)." }) },
    resolve: (_query, _root, { id }, ctx) => sendRefundClaim(ctx.prisma, ctx.scope(), id, ctx.charges),
  }),
}));
