// A plan and an INCOMPLETE subscription written straight to the database, as POST /v1/subscriptions
// leaves them: for the buyer pages' tests, which start where the merchant's part ends.
import { randomBytes } from "node:crypto";
import { newId } from "../../src/domain/ids.js";
import { CHECKOUT_WINDOW_MS, periodSeconds, type PlanInterval } from "../../src/domain/subscriptions.js";
import type { Subscription } from "../../src/generated/prisma/client.js";
import type { TestApp } from "./harness.js";

/** A new test-mode subscription of `app`'s merchant, INCOMPLETE, on a new plan (25.00 USDC a month unless told). */
export async function newSubscriptionRow(
  app: TestApp,
  opts: { name?: string; amount?: bigint; interval?: PlanInterval; intervalCount?: number; trialDays?: number } = {},
): Promise<Subscription> {
  const prisma = app.db.prisma;
  const merchantId = app.merchant.merchant.id;
  const amount = opts.amount ?? 25_000_000n;
  const interval = opts.interval ?? "month";
  const intervalCount = opts.intervalCount ?? 1;
  const trialDays = opts.trialDays ?? 0;
  const customer = await prisma.customer.create({
    data: { id: newId("cus"), merchantId, livemode: false, name: "A buyer", email: `buyer-${randomBytes(4).toString("hex")}@example.com` },
  });
  const plan = await prisma.plan.create({
    data: { id: newId("plan"), merchantId, livemode: false, name: opts.name ?? "Pro plan", amount, interval, intervalCount, trialDays },
  });
  return prisma.subscription.create({
    data: {
      id: newId("sub"),
      merchantId,
      livemode: false,
      customerId: customer.id,
      planId: plan.id,
      amount,
      periodSeconds: periodSeconds(interval, intervalCount),
      feeBps: 100,
      trialDays,
      manageToken: randomBytes(24).toString("base64url"),
      expiresAt: new Date(Date.now() + CHECKOUT_WINDOW_MS),
    },
  });
}
