// Plans (.docs/subscriptions.md "Plans"): what a merchant sells on a schedule: a name, an amount per
// period, the period (interval × intervalCount) and a default trial.
//
// Invariants:
// - a plan's amount, interval, intervalCount and trialDays never change: subscriptions copy them at
//   creation, and a buyer who authorized one amount is never shown another for the same plan; a PATCH
//   naming any of them is 400 parameter_unknown (make a new plan and retire the old one instead);
// - a period is at most one year long in total (interval × intervalCount ≤ 365 days): a permission
//   signed for longer windows would let one pull wait for years;
// - a retired plan (active: false) starts no subscription (409 plan_inactive); its subscriptions go on;
// - a live plan is made only while the merchant has a live settlement wallet.
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Prisma as P } from "../generated/prisma/client.js";
import type { ChargeSettings } from "./charges/settings.js";
import { invalidParam, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { mergeMetadata, storedMetadata } from "./metadata.js";
import { formatAmount, parseAmount } from "./money.js";
import { keysetPage, type Page, type PageEnd, type Position } from "./paging.js";
import type { PlanFilters, PlanListQuery, PlanRequest, PlanUpdate } from "./plan-requests.js";
import { inScope, type Scope } from "./scope.js";
import { assertLiveWallet } from "./settlement-wallets.js";
import { type Plan, periodSeconds } from "./subscriptions.js";

/** The longest period a plan bills: a year (365 days), whatever the interval. */
export const MAX_PERIOD_SECONDS = periodSeconds("year", 1);

/** The amount of a plan in base units: within the charge bounds; 400 naming `amount` otherwise. */
function planAmount(value: string, settings: Pick<ChargeSettings, "amount">): bigint {
  const amount = parseAmount(value);
  if (amount === null || amount < settings.amount.min || amount > settings.amount.max) {
    throw invalidParam(
      "amount",
      `Invalid amount: must be a decimal string with at most 6 decimals between ${formatAmount(settings.amount.min)} and ${formatAmount(settings.amount.max)} USDC`,
    );
  }
  return amount;
}

/** Creates an active plan; a live one needs a live settlement wallet. */
export async function createPlan(prisma: Prisma, scope: Scope, data: PlanRequest, settings: Pick<ChargeSettings, "amount">, now = new Date()): Promise<Plan> {
  const amount = planAmount(data.amount, settings);
  const intervalCount = data.intervalCount ?? 1;
  if (periodSeconds(data.interval, intervalCount) > MAX_PERIOD_SECONDS) {
    throw invalidParam("intervalCount", `Invalid intervalCount: a period is at most one year (365 days); ${intervalCount} ${data.interval}s is longer`);
  }
  await assertLiveWallet(prisma, scope);
  return prisma.plan.create({
    data: {
      id: newId("plan"),
      ...inScope(scope),
      name: data.name.trim(),
      amount,
      interval: data.interval,
      intervalCount,
      trialDays: data.trialDays ?? 0,
      metadata: jsonOrNull(mergeMetadata(null, data.metadata)),
      createdAt: now,
      updatedAt: now,
    },
  });
}

/** A plan of `scope`, or 404 (naming `param`). */
export async function getPlan(prisma: Prisma | P.TransactionClient, scope: Scope, id: string, param = "id"): Promise<Plan> {
  const plan = await prisma.plan.findFirst({ where: { id, ...inScope(scope) } });
  if (!plan) throw notFound("plan", id, param);
  return plan;
}

/** Renames a plan, retires or reactivates it (live: again only with a live wallet), or merges its metadata. */
export async function updatePlan(prisma: Prisma, scope: Scope, id: string, data: PlanUpdate, now = new Date()): Promise<Plan> {
  if (data.active === true) await assertLiveWallet(prisma, scope);
  return prisma.$transaction(async (tx) => {
    // The row lock keeps two concurrent metadata merges from losing each other's keys.
    const [row] = await tx.$queryRaw<{ metadata: unknown }[]>`
      SELECT metadata FROM plans WHERE id = ${id} AND merchant_id = ${scope.merchantId} AND livemode = ${scope.livemode} FOR UPDATE`;
    if (!row) throw notFound("plan", id);
    const metadata = data.metadata === undefined ? undefined : mergeMetadata(storedMetadata(row.metadata, "plans.metadata"), data.metadata);
    return tx.plan.update({
      where: { id },
      data: {
        ...(data.name !== undefined && { name: data.name.trim() }),
        ...(data.active !== undefined && { active: data.active }),
        ...(metadata !== undefined && { metadata: jsonOrNull(metadata) }),
        updatedAt: now,
      },
    });
  });
}

function planFilter(scope: Scope, f: PlanFilters): P.PlanWhereInput {
  return { ...inScope(scope), ...(f.active !== undefined && { active: f.active }) };
}

/** How many plans match the list's filter (GraphQL's `totalCount`). */
export function countPlans(prisma: Prisma, scope: Scope, filters: PlanFilters): Promise<number> {
  return prisma.plan.count({ where: planFilter(scope, filters) });
}

/** One page of plans, newest first, optionally only active or retired ones. */
export async function listPlans(prisma: Prisma, scope: Scope, query: PlanListQuery, end: PageEnd = "newest"): Promise<Page<Plan>> {
  const { active, ...page } = query;
  const where = planFilter(scope, { active });
  return keysetPage(
    "plan",
    page,
    (id): Promise<Position | null> => prisma.plan.findFirst({ where: { id, ...inScope(scope) }, select: { id: true, createdAt: true } }),
    (q) => prisma.plan.findMany({ where: { AND: [where, q.where] }, orderBy: q.orderBy, take: q.take }),
    end,
  );
}
