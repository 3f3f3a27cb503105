// `PaymentLink`: a no-code checkout whose page makes a charge for each buyer, like REST's payment
// links. Rules live in domain/payment-links.ts.
import { CHARGE_ORDER } from "../../domain/charges.js";
import type { Metadata } from "../../domain/metadata.js";
import { formatAmount } from "../../domain/money.js";
import { countPaymentLinks, createPaymentLink, getPaymentLink, listPaymentLinks, paymentLinkUrl, updatePaymentLink } from "../../domain/payment-links.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageRequest } from "../connection.js";

const PaymentLink = builder.prismaNode("PaymentLink", {
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode"),
    name: t.exposeString("name"),
    amount: t.string({ description: "USDC; fixed for the link's life.", resolve: (l) => formatAmount(l.amount) }),
    description: t.exposeString("description", { nullable: true }),
    url: t.string({
      description: "Share it: each buyer who pays there gets a charge of their own.",
      resolve: (l, _args, ctx) => paymentLinkUrl(l, ctx.charges),
    }),
    active: t.exposeBoolean("active"),
    successUrl: t.exposeString("successUrl", { nullable: true }),
    cancelUrl: t.exposeString("cancelUrl", { nullable: true }),
    metadata: t.field({ type: "Metadata", nullable: true, description: "Copied onto every charge it makes.", resolve: (l) => l.metadata as Metadata | null }),
    createdAt: t.string({ resolve: (l) => l.createdAt.toISOString() }),
    charges: t.relatedConnection("charges", {
      cursor: "id",
      totalCount: true,
      defaultSize: 10,
      maxSize: 100,
      description: "The charges buyers made from it, newest first.",
      query: () => ({ orderBy: CHARGE_ORDER }),
    }),
  }),
});

const linkFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  description: t.string(),
  successUrl: t.string({ description: "Where the buyer goes once paid (absolute https; http too in test mode)." }),
  cancelUrl: t.string(),
  metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
});

const CreatePaymentLinkInput = builder.inputType("CreatePaymentLinkInput", {
  fields: (t) => ({ name: t.string({ required: true }), amount: t.string({ required: true, description: 'USDC, e.g. "25.00".' }), ...linkFields(t) }),
});

const UpdatePaymentLinkInput = builder.inputType("UpdatePaymentLinkInput", {
  fields: (t) => ({ name: t.string(), active: t.boolean({ description: "false retires the link: its page answers 410." }), ...linkFields(t) }),
});

builder.queryFields((t) => ({
  paymentLinks: t.connection(
    {
      type: PaymentLink,
      description: "Payment links, newest first.",
      args: { active: t.arg.boolean() },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { active: args.active ?? undefined };
        const page = await listPaymentLinks(ctx.prisma, scope, { ...pageRequest(args), ...filters });
        return connectionOf(page, args, () => countPaymentLinks(ctx.prisma, scope, filters));
      },
    },
    countedConnection("Payment links matching the filter."),
  ),
  paymentLink: t.prismaField({
    type: "PaymentLink",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, { id }, ctx) => getPaymentLink(ctx.prisma, ctx.scope(), id),
  }),
}));

builder.prismaObjectField("Charge", "paymentLink", (t) =>
  t.relation("paymentLink", { nullable: true, description: "The payment link a buyer made this charge from, if any." }),
);

builder.mutationFields((t) => ({
  createPaymentLink: t.prismaField({
    type: "PaymentLink",
    args: { input: t.arg({ type: CreatePaymentLinkInput, required: true }) },
    resolve: (_query, _root, { input }, ctx) => createPaymentLink(ctx.prisma, ctx.scope(), { ...input }, ctx.charges),
  }),
  updatePaymentLink: t.prismaField({
    type: "PaymentLink",
    description: "Changes all but the amount; active: false retires it.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdatePaymentLinkInput, required: true }) },
    resolve: (_query, _root, { id, input }, ctx) => updatePaymentLink(ctx.prisma, ctx.scope(), id, { ...input }),
  }),
}));
