// The request contract of plans: the bodies of POST /v1/plans and PATCH /v1/plans/:id (GraphQL's
// createPlan and updatePlan inputs) and the query of GET /v1/plans. The doors parse a request with
// these (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { metadataInput } from "./metadata.js";
import { pageParams } from "./paging.js";
import { PLAN_INTERVALS, trialDaysField } from "./subscriptions.js";
import { amountInput, integerField } from "./validation.js";

const name = z
  .string()
  .max(200)
  .refine((s) => s.trim().length > 0, "must not be blank");

/** The body of POST /v1/plans (and the createPlan mutation's input). */
export const createSchema = z.strictObject(
  {
    name,
    amount: amountInput("25.00"),
    interval: z.enum(PLAN_INTERVALS, { error: `must be one of ${PLAN_INTERVALS.join(", ")}` }),
    intervalCount: integerField(1, 365).optional(),
    trialDays: trialDaysField.optional(),
    metadata: metadataInput.optional(),
  },
  { error: "must be a JSON object" },
);

/** The body of PATCH /v1/plans/:id: name, active, metadata; the price and period never change. */
export const updateSchema = z.strictObject(
  { name: name.optional(), active: z.boolean().optional(), metadata: metadataInput.optional() },
  { error: "must be a JSON object" },
);

/** The query of GET /v1/plans: a keyset page, optionally only active or retired plans. */
export const listSchema = z.strictObject({
  ...pageParams,
  active: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")], { error: "must be true or false" }).optional(),
});

/** A plan to create, parsed (createSchema). */
export type PlanRequest = z.output<typeof createSchema>;
/** A plan's changes, parsed (updateSchema). */
export type PlanUpdate = z.output<typeof updateSchema>;
/** The query of GET /v1/plans, parsed (listSchema). */
export type PlanListQuery = z.output<typeof listSchema>;
/** A list's filter alone: what the count takes. */
export type PlanFilters = Pick<PlanListQuery, "active">;
