// `Plan`: what a merchant bills on a schedule, like REST's plans. Rules live in domain/plans.ts.
import { describe } from "../../domain/describe.js";
import { storedMetadata } from "../../domain/metadata.js";
import { createSchema, listSchema, updateSchema } from "../../domain/plan-requests.js";
import { countPlans, createPlan, getPlan, listPlans, updatePlan } from "../../domain/plans.js";
import { PLAN_INTERVALS, PlanResource } from "../../domain/subscriptions.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

// Upper case like every GraphQL enum; the values stay the domain's (and REST's) lower-case ones.
const PLAN_INTERVAL_WORDS: Record<(typeof PLAN_INTERVALS)[number], string> = {
  day: "A day (86,400 seconds).",
  week: "A week (7 days).",
  month: "A month of 30 days (periods are fixed windows on chain).",
  year: "A year of 365 days.",
};
const PlanInterval = builder.enumType("PlanInterval", {
  description: "A period's unit: fixed windows on chain, a month being 30 days and a year 365.",
  values: Object.fromEntries(PLAN_INTERVALS.map((i) => [i.toUpperCase(), { value: i, description: PLAN_INTERVAL_WORDS[i] }])) as {
    [K in (typeof PLAN_INTERVALS)[number] as Uppercase<K>]: { value: K; description: string };
  },
});

const Plan = builder.prismaNode("Plan", {
  description: "What a merchant bills on a schedule: an amount per period, with an optional trial.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(PlanResource, "livemode") }),
    name: t.exposeString("name", { description: describe(PlanResource, "name") }),
    amount: t.field({ type: "Amount", description: describe(PlanResource, "amount"), resolve: (p) => p.amount }),
    currency: t.string({ description: describe(PlanResource, "currency"), resolve: () => "USDC" }),
    interval: t.field({ type: PlanInterval, description: describe(PlanResource, "interval"), resolve: (p) => p.interval as (typeof PLAN_INTERVALS)[number] }),
    intervalCount: t.exposeInt("intervalCount", { description: describe(PlanResource, "intervalCount") }),
    trialDays: t.exposeInt("trialDays", { description: describe(PlanResource, "trialDays") }),
    active: t.exposeBoolean("active", { description: describe(PlanResource, "active") }),
    metadata: t.field({
      type: "Metadata",
      nullable: true,
      description: describe(PlanResource, "metadata"),
      resolve: (p) => storedMetadata(p.metadata, "plans.metadata"),
    }),
    createdAt: t.field({ type: "DateTime", description: describe(PlanResource, "createdAt"), resolve: (p) => p.createdAt }),
  }),
});

const CreatePlanInput = builder.inputType("CreatePlanInput", {
  description: "A new plan; its amount, period and trial never change afterwards.",
  fields: (t) => ({
    name: t.string({ required: true, description: "What the buyer subscribes to (1–200 characters)." }),
    amount: t.string({ required: true, description: 'USDC per period, e.g. "25.00".' }),
    interval: t.field({ type: PlanInterval, required: true, description: "The period's unit." }),
    intervalCount: t.int({ description: "Units per period (default 1); a period is at most a year." }),
    trialDays: t.int({ description: "The default trial, 0–730 days." }),
    metadata: t.field({ type: "Metadata", description: "Your key-value pairs." }),
  }),
});

const UpdatePlanInput = builder.inputType("UpdatePlanInput", {
  description: "The fields to change (the amount, period and trial never change); an absent one stays as it is.",
  fields: (t) => ({
    name: t.string({ description: "What the buyer subscribes to." }),
    active: t.boolean({ description: "false retires the plan: it starts no new subscription." }),
    metadata: t.field({ type: "Metadata", description: "Merged into the existing metadata; a key set to null is removed." }),
  }),
});

builder.queryFields((t) => ({
  plans: t.connection(
    {
      type: Plan,
      description: "Plans, newest first.",
      args: { active: t.arg.boolean({ description: "Only active plans (true) or retired ones (false)." }) },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = { active: args.active ?? undefined };
        const query = parseInput(listSchema, { ...pageRequest(args), ...filters });
        const page = await listPlans(ctx.prisma, scope, query, pageEnd(args));
        return connectionOf(page, args, () => countPlans(ctx.prisma, scope, query));
      },
    },
    countedConnection("Plans matching the filter."),
  ),
  plan: t.prismaField({
    type: "Plan",
    description: "A plan by id; resource_missing when the key's merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The plan's id (plan_…)." }) },
    resolve: (_query, _root, { id }, ctx) => getPlan(ctx.prisma, ctx.scope(), id),
  }),
}));

builder.mutationFields((t) => ({
  createPlan: t.prismaField({
    type: "Plan",
    description: "Creates an active plan. A live plan needs a live settlement wallet (settlement_wallet_missing).",
    args: { input: t.arg({ type: CreatePlanInput, required: true, description: "The plan." }) },
    resolve: (_query, _root, { input }, ctx) => createPlan(ctx.prisma, ctx.scope(), parseInput(createSchema, { ...input }), ctx.charges),
  }),
  updatePlan: t.prismaField({
    type: "Plan",
    description: "Renames, retires (active: false) or reactivates a plan, or merges its metadata.",
    args: {
      id: t.arg.id({ required: true, description: "The plan's id (plan_…)." }),
      input: t.arg({ type: UpdatePlanInput, required: true, description: "The changes." }),
    },
    resolve: (_query, _root, { id, input }, ctx) => updatePlan(ctx.prisma, ctx.scope(), id, parseInput(updateSchema, { ...input })),
  }),
}));
