// Plans and subscriptions over GraphQL (test/graphql/subscriptions.test.ts is the live feed's
// `Subscription` root type; the billing object type is `CustomerSubscription`): the same rules and
// errors as REST, the nested connections (Customer.subscriptions, CustomerSubscription.invoices) and
// the relations (plan, customer, Invoice.subscription).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING);
}, 60_000);
afterAll(() => app?.stop());

async function gql(query: string, variables: Record<string, unknown> = {}, key?: string) {
  const res = await app.gql(query, variables, key);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
}
const errorOf = async (query: string, variables: Record<string, unknown> = {}, key?: string) => (await app.gql(query, variables, key)).errors?.[0];

const CREATE_PLAN = `mutation($i: CreatePlanInput!) { createPlan(input: $i) { id name amount currency interval intervalCount trialDays active metadata } }`;
const CREATE_SUB = `mutation($i: CreateSubscriptionInput!) { createSubscription(input: $i) { id status amount checkoutUrl manageUrl cancelAtPeriodEnd plan { id name } customer { id email } } }`;
const SUB_FIELDS = `id status cancelAtPeriodEnd canceledAt cancelReason metadata`;

let customerId: string;
beforeAll(async () => {
  customerId = (await gql(`mutation { createCustomer(input: { email: "gql-sub@example.com", name: "GQL" }) { id } }`)).createCustomer.id;
});

describe("plans and subscriptions over GraphQL", () => {
  it("creates, lists and retires plans", async () => {
    const plan = (await gql(CREATE_PLAN, { i: { name: "Team", amount: "40", interval: "WEEK", intervalCount: 2, trialDays: 3, metadata: { a: 1 } } }))
      .createPlan;
    expect(plan).toMatchObject({
      name: "Team",
      amount: "40.00",
      currency: "USDC",
      interval: "WEEK",
      intervalCount: 2,
      trialDays: 3,
      active: true,
      metadata: { a: 1 },
    });
    expect((await gql(`query($id: ID!) { plan(id: $id) { id } }`, { id: plan.id })).plan.id).toBe(plan.id);
    const retired = (
      await gql(`mutation($id: ID!) { updatePlan(id: $id, input: { active: false, name: "Team (old)" }) { active name amount } }`, { id: plan.id })
    ).updatePlan;
    expect(retired).toEqual({ active: false, name: "Team (old)", amount: "40.00" });
    const listed = (await gql(`{ plans(active: false, first: 100) { totalCount edges { node { id } } } }`)).plans;
    expect(listed.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(plan.id);
    expect(listed.totalCount).toBeGreaterThanOrEqual(1);
    const bad = await errorOf(CREATE_PLAN, { i: { name: "x", amount: "5", interval: "YEAR", intervalCount: 2 } });
    expect(bad.extensions).toMatchObject({ code: "parameter_invalid", param: "intervalCount" });
  });

  it("subscribes a customer, with the plan and customer, and the same errors as REST", async () => {
    const plan = (await gql(CREATE_PLAN, { i: { name: "Basic", amount: "9.99", interval: "MONTH" } })).createPlan;
    const sub = (await gql(CREATE_SUB, { i: { customerId, planId: plan.id, metadata: { crm: "x1" } } })).createSubscription;
    expect(sub).toMatchObject({
      status: "INCOMPLETE",
      amount: "9.99",
      cancelAtPeriodEnd: false,
      plan: { id: plan.id, name: "Basic" },
      customer: { id: customerId },
    });
    expect(sub.checkoutUrl).toBe(`${app.settings.paymentBaseUrl}/subscribe/${sub.id}`);
    expect(sub.manageUrl).toMatch(/\/manage\?token=[0-9A-Za-z]{32}$/);

    const before = await app.db.prisma.subscription.count();
    expect((await errorOf(CREATE_SUB, { i: { customerId: "cus_nope", planId: plan.id } })).extensions).toMatchObject({
      code: "resource_missing",
      param: "customerId",
    });
    await gql(`mutation($id: ID!) { updatePlan(id: $id, input: { active: false }) { id } }`, { id: plan.id });
    expect((await errorOf(CREATE_SUB, { i: { customerId, planId: plan.id } })).extensions).toMatchObject({ code: "plan_inactive", param: "planId" });
    expect((await errorOf(CREATE_SUB, { i: { customerId, planId: plan.id, trialDays: 1000 } })).extensions).toMatchObject({
      code: "parameter_invalid",
      param: "trialDays",
    });
    expect(await app.db.prisma.subscription.count()).toBe(before);
  });

  it("lists with filters, nests a customer's subscriptions and a subscription's invoices, and changes and cancels", async () => {
    const plan = (await gql(CREATE_PLAN, { i: { name: "Daily", amount: "1", interval: "DAY" } })).createPlan;
    const a = (await gql(CREATE_SUB, { i: { customerId, planId: plan.id } })).createSubscription;
    const b = (await gql(CREATE_SUB, { i: { customerId, planId: plan.id, trialDays: 0 } })).createSubscription;
    const invoice = await app.db.prisma.invoice.create({
      data: {
        id: `inv_gqlsub${Date.now()}`,
        merchantId: app.merchant.merchant.id,
        livemode: false,
        customerId,
        status: "OPEN",
        total: 1_000_000n,
        subscriptionId: a.id,
        billingReason: "subscription_create",
        periodIndex: 0,
      },
    });

    const listed = (await gql(`query($p: ID!) { subscriptions(planId: $p, status: INCOMPLETE) { totalCount edges { node { id } } } }`, { p: plan.id }))
      .subscriptions;
    expect(listed.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([b.id, a.id]);
    expect(listed.totalCount).toBe(2);

    const nested = await gql(
      `query($c: ID!, $s: ID!) {
        customer(id: $c) { subscriptions(first: 10) { totalCount edges { node { id plan { id } } } } }
        subscription(id: $s) { invoices(first: 5) { totalCount edges { node { id subscriptionId billingReason subscription { id } } } } }
        invoices(subscriptionId: $s) { edges { node { id } } }
      }`,
      { c: customerId, s: a.id },
    );
    expect(nested.customer.subscriptions.edges.map((e: { node: { id: string } }) => e.node.id).slice(0, 2)).toEqual([b.id, a.id]);
    expect(nested.customer.subscriptions.edges[0].node.plan.id).toBe(plan.id);
    expect(nested.subscription.invoices).toEqual({
      totalCount: 1,
      edges: [{ node: { id: invoice.id, subscriptionId: a.id, billingReason: "SUBSCRIPTION_CREATE", subscription: { id: a.id } } }],
    });
    expect(nested.invoices.edges).toEqual([{ node: { id: invoice.id } }]);

    const updated = (await gql(`mutation($id: ID!) { updateSubscription(id: $id, input: { metadata: { k: "v" } }) { ${SUB_FIELDS} } }`, { id: a.id }))
      .updateSubscription;
    expect(updated).toMatchObject({ status: "INCOMPLETE", metadata: { k: "v" } });
    const canceled = (await gql(`mutation($id: ID!) { cancelSubscription(id: $id) { ${SUB_FIELDS} } }`, { id: a.id })).cancelSubscription;
    expect(canceled).toMatchObject({ status: "CANCELED", cancelReason: "requested" });
    expect((await errorOf(`mutation($id: ID!) { cancelSubscription(id: $id, atPeriodEnd: true) { id } }`, { id: a.id })).extensions).toMatchObject({
      code: "subscription_not_cancelable",
    });
    const deleting = await errorOf(`mutation($id: ID!) { deleteCustomer(id: $id) { id } }`, { id: customerId });
    expect(deleting.extensions).toMatchObject({ code: "customer_has_subscriptions" });
  });

  it("another merchant or the other mode sees none of it", async () => {
    const plan = (await gql(CREATE_PLAN, { i: { name: "Mine", amount: "2", interval: "MONTH" } })).createPlan;
    const sub = (await gql(CREATE_SUB, { i: { customerId, planId: plan.id } })).createSubscription;
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, app.liveKey]) {
      expect((await errorOf(`query($id: ID!) { plan(id: $id) { id } }`, { id: plan.id }, key)).extensions.code).toBe("resource_missing");
      expect((await errorOf(`query($id: ID!) { subscription(id: $id) { id } }`, { id: sub.id }, key)).extensions.code).toBe("resource_missing");
      expect((await errorOf(`mutation($id: ID!) { cancelSubscription(id: $id) { id } }`, { id: sub.id }, key)).extensions.code).toBe("resource_missing");
      expect((await gql(`{ subscriptions(first: 100) { edges { node { id } } } }`, {}, key)).subscriptions.edges).toEqual([]);
    }
    expect((await gql(`query($id: ID!) { subscription(id: $id) { status } }`, { id: sub.id })).subscription.status).toBe("INCOMPLETE");
  });
});
