// `Subscription`: a customer's recurring billing on a plan, pulled each period from the buyer's own
// wallet, like REST's subscriptions. Rules live in domain/subscriptions.ts and domain/subscription-endings.ts.
// (The GraphQL `Subscription` root type is the live feed's: this object type is `CustomerSubscription`.)
import { describe } from "../../domain/describe.js";
import { storedMetadata } from "../../domain/metadata.js";
import { cancelSubscription, updateSubscription } from "../../domain/subscription-endings.js";
import { createSchema, filterSchema, listSchema, updateSchema } from "../../domain/subscription-requests.js";
import {
  checkoutUrl,
  countSubscriptions,
  createSubscription,
  customersSubscriptions,
  getSubscription,
  listSubscriptions,
  manageUrl,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus as Status,
  SubscriptionResource,
} from "../../domain/subscriptions.js";
import { parseInput } from "../../domain/validation.js";
import type { Prisma as P } from "../../generated/prisma/client.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest, relatedConnection } from "../connection.js";

const STATUS_DESCRIPTIONS: Record<Status, string> = {
  INCOMPLETE: "Created: the buyer has not authorized it at its checkoutUrl yet.",
  INCOMPLETE_EXPIRED: "The buyer did not authorize it within 23 hours: it never started.",
  TRIALING: "Authorized on chain; the first pull comes at the trial's end.",
  ACTIVE: "The current period is paid.",
  PAST_DUE: "A pull failed; it is retried on the retry schedule within the period.",
  CANCELED: "Ended: by you, the buyer, failed retries, or a permission revoked on chain (cancelReason says which).",
};

const SubscriptionStatus = builder.enumType("SubscriptionStatus", {
  description: "INCOMPLETE → TRIALING | ACTIVE ⇄ PAST_DUE → CANCELED; INCOMPLETE_EXPIRED when never authorized.",
  values: Object.fromEntries(SUBSCRIPTION_STATUSES.map((s) => [s, { description: STATUS_DESCRIPTIONS[s] }])),
});

const CustomerSubscription = builder.prismaNode("Subscription", {
  name: "CustomerSubscription",
  description: "A customer's recurring billing on a plan, pulled each period from the buyer's own wallet under a capped, revocable permission.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(SubscriptionResource, "livemode") }),
    status: t.field({ type: SubscriptionStatus, description: describe(SubscriptionResource, "status"), resolve: (s) => s.status }),
    customer: t.relation("customer", { description: "The customer billed." }),
    plan: t.relation("plan", { description: "The plan it was made from (its amount and period were copied then)." }),
    amount: t.field({ type: "Amount", description: describe(SubscriptionResource, "amount"), resolve: (s) => s.amount }),
    currency: t.string({ description: describe(SubscriptionResource, "currency"), resolve: () => "USDC" }),
    chainId: t.exposeInt("chainId", { nullable: true, description: describe(SubscriptionResource, "chainId") }),
    payer: t.exposeString("payer", { nullable: true, description: describe(SubscriptionResource, "payer") }),
    contractAddress: t.exposeString("contractAddress", {
      nullable: true,
      description: describe(SubscriptionResource, "contractAddress"),
    }),
    currentPeriodStart: t.field({
      type: "DateTime",
      nullable: true,
      description: describe(SubscriptionResource, "currentPeriodStart"),
      resolve: (s) => s.currentPeriodStart,
    }),
    currentPeriodEnd: t.field({
      type: "DateTime",
      nullable: true,
      description: describe(SubscriptionResource, "currentPeriodEnd"),
      resolve: (s) => s.currentPeriodEnd,
    }),
    trialEnd: t.field({ type: "DateTime", nullable: true, description: describe(SubscriptionResource, "trialEnd"), resolve: (s) => s.trialEnd }),
    cancelAtPeriodEnd: t.exposeBoolean("cancelAtPeriodEnd", { description: describe(SubscriptionResource, "cancelAtPeriodEnd") }),
    canceledAt: t.field({ type: "DateTime", nullable: true, description: describe(SubscriptionResource, "canceledAt"), resolve: (s) => s.canceledAt }),
    cancelReason: t.exposeString("cancelReason", {
      nullable: true,
      description: describe(SubscriptionResource, "cancelReason"),
    }),
    latestInvoiceId: t.exposeString("latestInvoiceId", { nullable: true, description: describe(SubscriptionResource, "latestInvoiceId") }),
    checkoutUrl: t.string({ description: describe(SubscriptionResource, "checkoutUrl"), resolve: (s, _args, ctx) => checkoutUrl(s, ctx.charges) }),
    manageUrl: t.string({
      description: describe(SubscriptionResource, "manageUrl"),
      resolve: (s, _args, ctx) => manageUrl(s, ctx.charges),
    }),
    metadata: t.field({
      type: "Metadata",
      nullable: true,
      description: describe(SubscriptionResource, "metadata"),
      resolve: (s) => storedMetadata(s.metadata, "subscriptions.metadata"),
    }),
    createdAt: t.field({ type: "DateTime", description: describe(SubscriptionResource, "createdAt"), resolve: (s) => s.createdAt }),
  }),
});

const CreateSubscriptionInput = builder.inputType("CreateSubscriptionInput", {
  description: "A customer and a plan; the buyer then authorizes it at its checkoutUrl.",
  fields: (t) => ({
    customerId: t.id({ required: true, description: "The customer billed (cus_…)." }),
    planId: t.id({ required: true, description: "An active plan (plan_…)." }),
    trialDays: t.int({ description: "Overrides the plan's trial: 0–730 days." }),
    metadata: t.field({ type: "Metadata", description: "Your key-value pairs." }),
  }),
});

const UpdateSubscriptionInput = builder.inputType("UpdateSubscriptionInput", {
  description: "The fields to change; an absent one stays as it is.",
  fields: (t) => ({
    metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
    cancelAtPeriodEnd: t.boolean({ description: "true: it ends when the current period does (now if it has none yet); false takes that back." }),
  }),
});

builder.queryFields((t) => ({
  subscriptions: t.connection(
    {
      type: CustomerSubscription,
      description: "Subscriptions, newest first.",
      args: {
        status: t.arg({ type: SubscriptionStatus, description: "Only subscriptions with this status." }),
        customerId: t.arg.id({ description: "Only this customer's subscriptions." }),
        planId: t.arg.id({ description: "Only this plan's subscriptions." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { status: args.status ?? undefined, customerId: args.customerId ?? undefined, planId: args.planId ?? undefined };
        const page = await listSubscriptions(ctx.prisma, scope, parseInput(listSchema, { ...pageRequest(args), ...filters }), pageEnd(args));
        return connectionOf(page, args, () => countSubscriptions(ctx.prisma, scope, parseInput(filterSchema, filters)));
      },
    },
    countedConnection("Subscriptions matching the filters."),
  ),
  subscription: t.prismaField({
    type: CustomerSubscription,
    description: "A subscription by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The subscription's id (sub_…)." }) },
    resolve: (query, _root, { id }, ctx) => getSubscription(ctx.prisma, ctx.scope(), id, query),
  }),
}));

builder.prismaObjectField("Customer", "subscriptions", (t) =>
  t.connection(
    {
      type: CustomerSubscription,
      description: "The customer's subscriptions, newest first.",
      resolve: (customer, args, ctx, info) =>
        relatedConnection(ctx, info, customer.id, args, "CustomerSubscription", (include: P.SubscriptionInclude | undefined) =>
          customersSubscriptions(ctx.prisma, ctx.scope(), include),
        ),
    },
    countedConnection("The customer's subscriptions."),
  ),
);

builder.prismaObjectField("Invoice", "subscription", (t) =>
  t.relation("subscription", { nullable: true, description: "The subscription whose period it bills, if any." }),
);

builder.mutationFields((t) => ({
  createSubscription: t.prismaField({
    type: CustomerSubscription,
    description:
      "Starts a subscription (INCOMPLETE) of a customer to an active plan (plan_inactive otherwise); send the buyer to its checkoutUrl. A live one needs a live settlement wallet and an enabled live chain.",
    args: { input: t.arg({ type: CreateSubscriptionInput, required: true, description: "The subscription." }) },
    resolve: (_query, _root, { input }, ctx) => createSubscription(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input }), ctx.charges),
  }),
  updateSubscription: t.prismaField({
    type: CustomerSubscription,
    description: "Merges metadata, or schedules (or takes back) its end at the current period's end; subscription_not_cancelable once ended.",
    args: {
      id: t.arg.id({ required: true, description: "The subscription's id (sub_…)." }),
      input: t.arg({ type: UpdateSubscriptionInput, required: true, description: "The changes." }),
    },
    resolve: (_query, _root, { id, input }, ctx) => updateSubscription(ctx.prisma, ctx.scope(), id, parseInput(updateSchema, { ...input }), ctx.charges),
  }),
  cancelSubscription: t.prismaField({
    type: CustomerSubscription,
    description: "Cancels now (CANCELED, cancelReason requested), or at the current period's end with atPeriodEnd; subscription_not_cancelable once ended.",
    args: {
      id: t.arg.id({ required: true, description: "The subscription's id (sub_…)." }),
      atPeriodEnd: t.arg.boolean({ description: "End when the current period does rather than now (default false)." }),
    },
    resolve: (_query, _root, { id, atPeriodEnd }, ctx) =>
      cancelSubscription(ctx.prisma, ctx.scope(), id, { atPeriodEnd: atPeriodEnd ?? false, reason: "requested" }, ctx.charges),
  }),
}));
