// Subscriptions over REST, the merchant's side: create (INCOMPLETE, the plan's terms copied, the
// checkout email), read, list (filters, paging), change, cancel now or at the period's end; bad input
// and refused changes change nothing; modes and merchants see only their own; a subscription's
// invoices carry it; a customer with subscriptions is kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKOUT_WINDOW_MS } from "../../src/domain/subscriptions.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
let customerId: string;
let planId: string;
beforeAll(async () => {
  app = await startApp(POLLING);
  customerId = (await app.call("POST", "/v1/customers", { body: { email: "subscriber@example.com", name: "Sub Scriber" } })).body.id;
  planId = (await app.call("POST", "/v1/plans", { body: { name: "Pro, monthly", amount: "25", interval: "month", trialDays: 7 } })).body.id;
}, 60_000);
afterAll(() => app?.stop());

const create = (body: Record<string, unknown>, key = app.testKey) => app.call("POST", "/v1/subscriptions", { key, body });
const newSub = async (body: Record<string, unknown> = {}) => {
  const res = await create({ customerId, planId, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
};
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((s) => s.id);
const eventsOf = async (id: string) =>
  (await app.db.prisma.event.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).filter((e) => (e.data as { id?: string }).id === id);
/** Stands for the engine: the buyer authorized it and its first period runs. */
const activate = (id: string) => {
  const start = new Date();
  return app.db.prisma.subscription.update({
    where: { id },
    data: { status: "ACTIVE", currentPeriodStart: start, currentPeriodEnd: new Date(start.getTime() + 30 * 86_400_000), periodIndex: 0 },
  });
};

describe("creating subscriptions", () => {
  it("starts INCOMPLETE with the plan's terms fixed, the checkout and manage links, and subscription.created", async () => {
    const before = Date.now();
    const sub = await newSub({ metadata: { account: "A-1" } });
    expect(sub).toMatchObject({
      object: "subscription",
      livemode: false,
      customerId,
      planId,
      status: "INCOMPLETE",
      amount: "25.00",
      currency: "USDC",
      chainId: null,
      payer: null,
      contractAddress: null,
      currentPeriodStart: null,
      currentPeriodEnd: null,
      trialEnd: null,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      cancelReason: null,
      latestInvoiceId: null,
      metadata: { account: "A-1" },
    });
    expect(sub.id).toMatch(/^sub_[0-9A-Za-z]{24}$/);
    const row = await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } });
    expect(sub.checkoutUrl).toBe(`${app.settings.paymentBaseUrl}/subscribe/${sub.id}`);
    expect(sub.manageUrl).toBe(`${sub.checkoutUrl}/manage?token=${row.manageToken}`);
    expect(row.manageToken).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(row).toMatchObject({ amount: 25_000_000n, periodSeconds: 30 * 86_400, feeBps: 100, trialDays: 7, nextPullAt: null, permission: null });
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(CHECKOUT_WINDOW_MS);
    expect(row.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect((await eventsOf(sub.id)).map((e) => e.type)).toEqual(["subscription.created"]);
    expect((await app.call("GET", `/v1/subscriptions/${sub.id}`)).body).toEqual(sub);
    // Two subscriptions never share a manage link.
    expect((await newSub()).manageUrl).not.toBe(sub.manageUrl);
  });

  it("takes trialDays over the plan's, and keeps its terms when the plan changes", async () => {
    const sub = await newSub({ trialDays: 0 });
    expect((await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } })).trialDays).toBe(0);
    const plan = (await app.call("POST", "/v1/plans", { body: { name: "Weekly x2", amount: "3.5", interval: "week", intervalCount: 2 } })).body;
    const other = await newSub({ planId: plan.id, trialDays: 30 });
    await app.call("PATCH", `/v1/plans/${plan.id}`, { body: { name: "Renamed", active: false } });
    const row = await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: other.id } });
    expect(row).toMatchObject({ amount: 3_500_000n, periodSeconds: 14 * 86_400, trialDays: 30 });
    expect((await app.call("GET", `/v1/subscriptions/${other.id}`)).body.status).toBe("INCOMPLETE");
  });

  it("emails the checkout link to the customer when the merchant emails invoices, in its name", async () => {
    const quiet = await newSub();
    expect(await app.db.prisma.email.count({ where: { relatedId: quiet.id } })).toBe(0);
    await app.db.prisma.merchant.update({ where: { id: app.merchant.merchant.id }, data: { emailInvoices: true } });
    try {
      const sub = await newSub();
      const [email, ...more] = await app.db.prisma.email.findMany({ where: { relatedId: sub.id } });
      expect(more).toEqual([]);
      expect(email).toMatchObject({ type: "subscription_checkout", to: "subscriber@example.com", livemode: false });
      expect(email!.subject).toContain("25.00 USDC every month");
      for (const text of ["Pro, monthly", "25.00 USDC every month", "7 days", sub.checkoutUrl]) expect(email!.text).toContain(text);
    } finally {
      await app.db.prisma.merchant.update({ where: { id: app.merchant.merchant.id }, data: { emailInvoices: false } });
    }
  });

  it("refuses bad input naming the field, and creates nothing", async () => {
    const counts = async () => [await app.db.prisma.subscription.count(), await app.db.prisma.event.count(), await app.db.prisma.email.count()];
    const before = await counts();
    expectError(await create({ planId }), 400, "parameter_missing", "customerId");
    expectError(await create({ customerId }), 400, "parameter_missing", "planId");
    expectError(await create({ customerId: "cus_nope", planId }), 400, "resource_missing", "customerId");
    expectError(await create({ customerId, planId: "plan_nope" }), 400, "resource_missing", "planId");
    for (const trialDays of [-1, 731, 2.5, "x"]) expectError(await create({ customerId, planId, trialDays }), 400, "parameter_invalid", "trialDays");
    expectError(await create({ customerId, planId, metadata: { k: "v".repeat(501) } }), 400, "parameter_invalid", "metadata.k");
    expectError(await create({ customerId, planId, amount: "1.00" }), 400, "parameter_unknown", "amount");
    // Another merchant's customer and plan are unknown here.
    const other = await app.newMerchant();
    const theirs = other.apiKeys.test.secret;
    const theirCustomer = (await app.call("POST", "/v1/customers", { key: theirs, body: { email: "x@example.com", name: "X" } })).body.id;
    const theirPlan = (await app.call("POST", "/v1/plans", { key: theirs, body: { name: "X", amount: "1", interval: "day" } })).body.id;
    expectError(await create({ customerId: theirCustomer, planId }), 400, "resource_missing", "customerId");
    expectError(await create({ customerId, planId: theirPlan }), 400, "resource_missing", "planId");
    // A retired plan starts none.
    const retired = (await app.call("POST", "/v1/plans", { body: { name: "Old", amount: "1", interval: "day" } })).body.id;
    await app.call("PATCH", `/v1/plans/${retired}`, { body: { active: false } });
    const beforeRetired = await counts();
    expectError(await create({ customerId, planId: retired }), 409, "plan_inactive", "planId");
    expect(await counts()).toEqual(beforeRetired);
    expect(before[0]).toBe(beforeRetired[0]);
  });

  it("a live subscription needs an enabled live chain (none here): refused, nothing made", async () => {
    const live = app.liveKey;
    const liveCustomer = (await app.call("POST", "/v1/customers", { key: live, body: { email: "live@example.com", name: "Live" } })).body.id;
    const livePlan = (await app.call("POST", "/v1/plans", { key: live, body: { name: "Live", amount: "5", interval: "month" } })).body.id;
    const before = await app.db.prisma.subscription.count();
    expectError(await create({ customerId: liveCustomer, planId: livePlan }, live), 400, "chain_unsupported");
    // Test-mode records are not the live mode's.
    expectError(await create({ customerId, planId: livePlan }, live), 400, "resource_missing", "customerId");
    expect(await app.db.prisma.subscription.count()).toBe(before);
  });
});

describe("reading and changing subscriptions", () => {
  it("lists newest first, filtered by status, customer and plan, paged by cursor", async () => {
    const customer2 = (await app.call("POST", "/v1/customers", { body: { email: "second@example.com", name: "Second" } })).body.id;
    const plan2 = (await app.call("POST", "/v1/plans", { body: { name: "Daily", amount: "1", interval: "day" } })).body.id;
    const a = await newSub({ customerId: customer2 });
    const b = await newSub({ customerId: customer2, planId: plan2 });
    const c = await newSub({ customerId: customer2 });
    await activate(b.id);
    expect(ids(await app.call("GET", `/v1/subscriptions?customerId=${customer2}`))).toEqual([c.id, b.id, a.id]);
    expect(ids(await app.call("GET", `/v1/subscriptions?planId=${plan2}`))).toEqual([b.id]);
    expect(ids(await app.call("GET", `/v1/subscriptions?customerId=${customer2}&status=INCOMPLETE`))).toEqual([c.id, a.id]);
    expect(ids(await app.call("GET", "/v1/subscriptions?status=ACTIVE&limit=100"))).toContain(b.id);
    const page = await app.call("GET", `/v1/subscriptions?customerId=${customer2}&limit=1&startingAfter=${c.id}`);
    expect(ids(page)).toEqual([b.id]);
    expect(page.body.hasMore).toBe(true);
    expect(ids(await app.call("GET", `/v1/subscriptions?customerId=${customer2}&endingBefore=${a.id}`))).toEqual([c.id, b.id]);
    expectError(await app.call("GET", "/v1/subscriptions?status=PAUSED"), 400, "parameter_invalid", "status");
    expectError(await app.call("GET", "/v1/subscriptions?startingAfter=sub_nope"), 400, "resource_missing", "startingAfter");
  });

  it("merges metadata with subscription.updated, and schedules or unschedules the end of an active one", async () => {
    const sub = await newSub({ metadata: { a: "1" } });
    await activate(sub.id);
    const patched = await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { metadata: { b: "2" } } });
    expect(patched.body).toMatchObject({ metadata: { a: "1", b: "2" }, status: "ACTIVE", cancelAtPeriodEnd: false });

    const scheduled = await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: true } });
    expect(scheduled.body).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: true, canceledAt: null });
    const unscheduled = await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: false } });
    expect(unscheduled.body).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: false });
    // Asking again for what already is sends nothing.
    await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: false } });
    const events = await eventsOf(sub.id);
    expect(events.map((e) => e.type)).toEqual(["subscription.created", "subscription.updated", "subscription.updated", "subscription.updated"]);
    expect(events.map((e) => (e.data as { cancelAtPeriodEnd: boolean }).cancelAtPeriodEnd)).toEqual([false, false, true, false]);

    // Scheduled already: the metadata still sends its event.
    await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: true, metadata: { c: "3" } } });
    const again = await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: true, metadata: { d: "4" } } });
    expect(again.body).toMatchObject({ cancelAtPeriodEnd: true, metadata: { a: "1", b: "2", c: "3", d: "4" } });
    expect((await eventsOf(sub.id)).slice(4).map((e) => [e.type, (e.data as { metadata: object }).metadata])).toEqual([
      ["subscription.updated", { a: "1", b: "2", c: "3" }],
      ["subscription.updated", { a: "1", b: "2", c: "3", d: "4" }],
    ]);

    expectError(await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELED" } }), 400, "parameter_unknown", "status");
    expectError(await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: "yes" } }), 400, "parameter_invalid", "cancelAtPeriodEnd");
    expect((await eventsOf(sub.id)).length).toBe(6);
  });

  it("cancels now by default, or at the period's end; a second cancel is 409 and changes nothing", async () => {
    const sub = await newSub();
    const canceled = await app.call("POST", `/v1/subscriptions/${sub.id}/cancel`, { body: {} });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: "CANCELED", cancelReason: "requested" });
    expect(canceled.body.canceledAt).not.toBeNull();
    expectError(await app.call("POST", `/v1/subscriptions/${sub.id}/cancel`, { body: {} }), 409, "subscription_not_cancelable", "id");
    expectError(await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: true } }), 409, "subscription_not_cancelable", "id");
    expectError(
      await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { cancelAtPeriodEnd: false, metadata: { x: "1" } } }),
      409,
      "subscription_not_cancelable",
      "id",
    );
    expect((await eventsOf(sub.id)).map((e) => e.type)).toEqual(["subscription.created", "subscription.canceled"]);
    expect((await app.call("GET", `/v1/subscriptions/${sub.id}`)).body).toEqual(canceled.body);
    // Its metadata still changes: the merchant's own notes.
    expect((await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { body: { metadata: { note: "churned" } } })).body.metadata).toEqual({ note: "churned" });

    const active = await newSub();
    await activate(active.id);
    const atEnd = await app.call("POST", `/v1/subscriptions/${active.id}/cancel`, { body: { atPeriodEnd: true } });
    expect(atEnd.body).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: true, canceledAt: null });
    const now = await app.call("POST", `/v1/subscriptions/${active.id}/cancel`);
    expect(now.body).toMatchObject({ status: "CANCELED", cancelReason: "requested" });
    expect((await eventsOf(active.id)).map((e) => e.type)).toEqual(["subscription.created", "subscription.updated", "subscription.canceled"]);
    expectError(await app.call("POST", `/v1/subscriptions/${active.id}/cancel`, { body: { atPeriodEnd: 1 } }), 400, "parameter_invalid", "atPeriodEnd");

    // cancelAtPeriodEnd on one not authorized yet (no period) ends it now.
    const incomplete = await newSub();
    expect((await app.call("PATCH", `/v1/subscriptions/${incomplete.id}`, { body: { cancelAtPeriodEnd: true } })).body).toMatchObject({
      status: "CANCELED",
      cancelReason: "requested",
    });
  });

  it("another merchant or the other mode sees none of it", async () => {
    const sub = await newSub();
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, app.liveKey]) {
      expectError(await app.call("GET", `/v1/subscriptions/${sub.id}`, { key }), 404, "resource_missing", "id");
      expectError(await app.call("PATCH", `/v1/subscriptions/${sub.id}`, { key, body: { metadata: { x: "y" } } }), 404, "resource_missing", "id");
      expectError(await app.call("POST", `/v1/subscriptions/${sub.id}/cancel`, { key, body: {} }), 404, "resource_missing", "id");
      expect(ids(await app.call("GET", "/v1/subscriptions?limit=100", { key }))).not.toContain(sub.id);
    }
    expect((await app.call("GET", `/v1/subscriptions/${sub.id}`)).body).toEqual(sub);
  });

  it("lists a subscription's invoices by subscriptionId, each with its billingReason", async () => {
    const sub = await newSub();
    const invoice = await app.db.prisma.invoice.create({
      data: {
        id: `inv_sub${Date.now()}`,
        merchantId: app.merchant.merchant.id,
        livemode: false,
        customerId,
        status: "OPEN",
        total: 25_000_000n,
        subscriptionId: sub.id,
        billingReason: "subscription_create",
        periodIndex: 0,
      },
    });
    const listed = await app.call("GET", `/v1/invoices?subscriptionId=${sub.id}`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ id: invoice.id, subscriptionId: sub.id, billingReason: "subscription_create" });
    const plain = (await app.call("POST", "/v1/invoices", { body: { customerId, lineItems: [{ description: "x", quantity: 1, unitAmount: "1" }] } })).body;
    expect(plain).toMatchObject({ subscriptionId: null, billingReason: null });
  });

  it("keeps a customer with subscriptions: deleting it is 409 and changes nothing", async () => {
    const kept = (await app.call("POST", "/v1/customers", { body: { email: "kept@example.com", name: "Kept" } })).body.id;
    const sub = await newSub({ customerId: kept });
    await app.call("POST", `/v1/subscriptions/${sub.id}/cancel`, { body: {} });
    expectError(await app.call("DELETE", `/v1/customers/${kept}`), 409, "customer_has_subscriptions", "id");
    expect((await app.call("GET", `/v1/customers/${kept}`)).status).toBe(200);
    const free = (await app.call("POST", "/v1/customers", { body: { email: "free@example.com", name: "Free" } })).body.id;
    expect((await app.call("DELETE", `/v1/customers/${free}`)).status).toBe(200);
  });
});
