// REST plans (.docs/subscriptions.md "Plans"). Rules live in domain/plans.ts.
import type { FastifyInstance } from "fastify";
import { createSchema, listSchema, updateSchema } from "../domain/plan-requests.js";
import { createPlan, getPlan, listPlans, updatePlan } from "../domain/plans.js";
import { PlanResource, planResource } from "../domain/subscriptions.js";
import { parseInput } from "../domain/validation.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Plans";

type IdParams = { Params: { id: string } };

/** Registers the plan endpoints. */
export function planRoutes(app: FastifyInstance, { prisma, charges: settings }: RestDeps): void {
  const create = {
    group: "create",
    doc: {
      operationId: "createPlan",
      summary: "Create a plan: an amount billed every interval × intervalCount, with an optional trial",
      description:
        "Creates an active plan. `amount` is billed each period, within the charge amount bounds; `interval` is day, week, month (30 days) or year (365 days), `intervalCount` 1 or more, the period being at most one year in total; `trialDays` (0–730) is the default trial of its subscriptions. Amount, interval, intervalCount and trialDays never change afterwards. A live plan needs a live settlement wallet (400 `settlement_wallet_missing`).",
      tag,
      body: createSchema,
      example: { name: "Pro, monthly", amount: "25.00", interval: "month", trialDays: 14 },
      ok: { 201: PlanResource },
      errors: ["settlement_wallet_missing"],
    },
  } as const;
  app.post("/v1/plans", { config: create }, async (req, reply) => {
    return reply.code(201).send(planResource(await createPlan(prisma, scopeOf(req), parseInput(createSchema, req.body ?? {}), settings)));
  });

  const list = {
    group: "list",
    doc: {
      operationId: "listPlans",
      summary: "List plans, newest first (active)",
      description: "Newest first, paged by cursor; `active` keeps the active or the retired ones.",
      tag,
      query: listSchema,
      ok: { 200: listOf(PlanResource) },
    },
  } as const;
  app.get("/v1/plans", { config: list }, async (req) => {
    const { data, hasMore } = await listPlans(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map(planResource), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: { operationId: "getPlan", summary: "Retrieve a plan", description: "The plan.", tag, ok: { 200: PlanResource } },
  } as const;
  app.get<IdParams>("/v1/plans/:id", { config: retrieve }, async (req) => planResource(await getPlan(prisma, scopeOf(req), req.params.id)));

  const update = {
    group: "create",
    doc: {
      operationId: "updatePlan",
      summary: "Rename a plan, retire it (active: false) or change its metadata",
      description:
        "Changes the name, `active` or metadata (merged). A retired plan starts no new subscription (409 `plan_inactive`); its subscriptions go on. The amount, interval, intervalCount and trialDays never change (400 `parameter_unknown`): make a new plan instead. `active: true` on a live plan needs a live settlement wallet.",
      tag,
      body: updateSchema,
      example: { active: false },
      ok: { 200: PlanResource },
      errors: ["settlement_wallet_missing"],
    },
  } as const;
  app.patch<IdParams>("/v1/plans/:id", { config: update }, async (req) =>
    planResource(await updatePlan(prisma, scopeOf(req), req.params.id, parseInput(updateSchema, req.body ?? {}))),
  );
}
