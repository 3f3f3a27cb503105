// `PaymentLink`: a no-code checkout whose page makes a charge for each buyer, like REST's payment
// links. Rules live in domain/payment-links.ts.
import { describe } from "../../domain/describe.js";
import { relatedCharges } from "../../domain/charges/list.js";
import { storedMetadata } from "../../domain/metadata.js";
import {
  countPaymentLinks,
  createPaymentLink,
  getPaymentLink,
  listPaymentLinks,
  paymentLinkUrl,
  updatePaymentLink,
  PaymentLinkResource,
} from "../../domain/payment-links.js";
import { createSchema, listSchema, updateSchema } from "../../domain/payment-link-requests.js";
import { parseInput } from "../../domain/validation.js";
import type { Prisma as P } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest, relatedConnection } from "../connection.js";
import { Charge } from "./Charge.js";

const PaymentLink = builder.prismaNode("PaymentLink", {
  description: "A no-code checkout: a page that makes a charge of a fixed amount for each buyer.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(PaymentLinkResource, "livemode") }),
    name: t.exposeString("name", { description: describe(PaymentLinkResource, "name") }),
    amount: t.field({ type: "Amount", description: describe(PaymentLinkResource, "amount"), resolve: (l) => l.amount }),
    description: t.exposeString("description", { nullable: true, description: describe(PaymentLinkResource, "description") }),
    url: t.string({
      description: describe(PaymentLinkResource, "url"),
      resolve: (l, _args, ctx) => paymentLinkUrl(l, ctx.charges),
    }),
    active: t.exposeBoolean("active", { description: describe(PaymentLinkResource, "active") }),
    successUrl: t.exposeString("successUrl", { nullable: true, description: describe(PaymentLinkResource, "successUrl") }),
    cancelUrl: t.exposeString("cancelUrl", { nullable: true, description: describe(PaymentLinkResource, "cancelUrl") }),
    metadata: t.field({
      type: "Metadata",
      nullable: true,
      description: describe(PaymentLinkResource, "metadata"),
      resolve: (l) => storedMetadata(l.metadata, "payment_links.metadata"),
    }),
    collectEmail: t.exposeBoolean("collectEmail", { description: describe(PaymentLinkResource, "collectEmail") }),
    quantityMax: t.exposeInt("quantityMax", {
      nullable: true,
      description: describe(PaymentLinkResource, "quantityMax"),
    }),
    createdAt: t.field({ type: "DateTime", description: describe(PaymentLinkResource, "createdAt"), resolve: (l) => l.createdAt }),
    charges: t.connection(
      {
        type: Charge,
        description: "The charges buyers made from it, newest first.",
        resolve: (link, args, ctx, info) =>
          relatedConnection(ctx, info, link.id, args, "Charge", (include: P.ChargeInclude | undefined) =>
            relatedCharges(ctx.prisma, ctx.scope(), "payment_link_id", include),
          ),
      },
      countedConnection("The charges buyers made from it."),
    ),
  }),
});

const linkFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  description: t.string({ description: "Shown to the buyer on the page." }),
  successUrl: t.string({ description: "Where the buyer goes once paid (absolute https; http too in test mode)." }),
  cancelUrl: t.string({ description: "Where a buyer who gives up goes." }),
  metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
  collectEmail: t.boolean({ description: "Ask the buyer's email before Pay (required on the page); the receipt goes there." }),
  quantityMax: t.int({ description: "Let the buyer pick a quantity from 1 to this (2–1000); null: always one." }),
});

const CreatePaymentLinkInput = builder.inputType("CreatePaymentLinkInput", {
  description: "A new payment link.",
  fields: (t) => ({
    name: t.string({ required: true, description: "What the buyer pays for." }),
    amount: t.string({ required: true, description: 'USDC, e.g. "25.00".' }),
    ...linkFields(t),
  }),
});

const UpdatePaymentLinkInput = builder.inputType("UpdatePaymentLinkInput", {
  description: "The fields to change (all but the amount); an absent one stays as it is.",
  fields: (t) => ({
    name: t.string({ description: "What the buyer pays for." }),
    active: t.boolean({ description: "false retires the link: its page answers 410." }),
    ...linkFields(t),
  }),
});

builder.queryFields((t) => ({
  paymentLinks: t.connection(
    {
      type: PaymentLink,
      description: "Payment links, newest first.",
      args: { active: t.arg.boolean({ description: "Only active links (true) or retired ones (false)." }) },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { active: args.active ?? undefined };
        const query = parseInput(listSchema, { ...pageRequest(args), ...filters });
        const page = await listPaymentLinks(ctx.prisma, scope, query, pageEnd(args));
        return connectionOf(page, args, () => countPaymentLinks(ctx.prisma, scope, query));
      },
    },
    countedConnection("Payment links matching the filter."),
  ),
  paymentLink: t.prismaField({
    type: "PaymentLink",
    description: "A payment link by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The link's id (plink_…)." }) },
    resolve: (query, _root, { id }, ctx) => getPaymentLink(ctx.prisma, ctx.scope(), id, query),
  }),
}));

builder.prismaObjectField("Charge", "paymentLink", (t) =>
  t.relation("paymentLink", { nullable: true, description: "The payment link a buyer made this charge from, if any." }),
);

builder.mutationFields((t) => ({
  createPaymentLink: t.prismaField({
    type: "PaymentLink",
    description:
      "Creates an active payment link: share its url. A live link needs a live settlement wallet (settlement_wallet_missing) and an enabled live chain (chain_unsupported, naming the operator's setting).",
    args: { input: t.arg({ type: CreatePaymentLinkInput, required: true, description: "The link." }) },
    resolve: (_query, _root, { input }, ctx) => createPaymentLink(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input }), ctx.charges),
  }),
  updatePaymentLink: t.prismaField({
    type: "PaymentLink",
    description: "Changes all but the amount; active: false retires it.",
    args: {
      id: t.arg.id({ required: true, description: "The link's id (plink_…)." }),
      input: t.arg({ type: UpdatePaymentLinkInput, required: true, description: "The changes." }),
    },
    resolve: (_query, _root, { id, input }, ctx) => updatePaymentLink(ctx.prisma, ctx.scope(), id, parseInput(updateSchema, { ...input }), ctx.charges),
  }),
}));
