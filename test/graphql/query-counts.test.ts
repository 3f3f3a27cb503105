// Every GraphQL list whose nodes nest lists or counts reads them once for the whole list: the number
// of SQL statements a query sends is the same for a merchant with 2 rows as for one with 20.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharge } from "../../src/domain/charges/create.js";
import { createSchema } from "../../src/domain/charges/requests.js";
import { parseInput } from "../../src/domain/validation.js";
import { createCustomer } from "../../src/domain/customers.js";
import { createInvoice } from "../../src/domain/invoices.js";
import { createPaymentLink } from "../../src/domain/payment-links.js";
import { createPlan } from "../../src/domain/plans.js";
import { createSubscription } from "../../src/domain/subscriptions.js";
import type { Scope } from "../../src/domain/scope.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
}, 60_000);
afterAll(() => app?.stop());

const SETTINGS = { amount: { min: 1n, max: 10n ** 12n }, paymentBaseUrl: "http://pay.test" };
const PASSWORD = "correct horse battery";

/**
 * A merchant's dashboard session, its test key, and `rows` customers, each with an invoice, a payment
 * link and two charges (of the invoice and the link), and a subscription to a plan of its own that the invoice bills.
 */
async function shopWith(rows: number) {
  const shop = await app.newMerchant();
  const scope: Scope = { merchantId: shop.merchant.id, livemode: false };
  for (let i = 0; i < rows; i++) {
    const customer = await createCustomer(app.db.prisma, scope, { email: `c${i}@example.com`, name: `C${i}` });
    const invoice = await createInvoice(
      app.db.prisma,
      scope,
      { customerId: customer.id, lineItems: [{ description: "A", quantity: 1, unitAmount: "1" }] },
      SETTINGS,
    );
    const link = await createPaymentLink(app.db.prisma, scope, { name: `L${i}`, amount: "1" }, SETTINGS);
    const plan = await createPlan(app.db.prisma, scope, { name: `P${i}`, amount: "1", interval: "month" }, SETTINGS);
    const sub = await createSubscription(app.db.prisma, scope, { customerId: customer.id, planId: plan.id }, SETTINGS);
    // A fixture: the invoice as the renewal engine would have made it for the subscription's period.
    await app.db.prisma.invoice.update({ where: { id: invoice.id }, data: { subscriptionId: sub.id, billingReason: "subscription_create", periodIndex: 0 } });
    for (const origin of [{ invoiceId: invoice.id }, { paymentLinkId: link.id }]) {
      const charge = await createCharge(
        app.db.prisma,
        scope,
        parseInput(createSchema, { orderId: `o-${i}-${Object.keys(origin)[0]}`, amount: "1", customerId: customer.id }),
        SETTINGS,
      );
      // A fixture: the charge as the invoice's or the link's page would have made it.
      await app.db.prisma.charge.update({ where: { id: charge.id }, data: origin });
    }
  }
  // Users besides the one signed in, whose passwords are never checked.
  await app.db.prisma.user.createMany({
    data: Array.from({ length: rows }, (_, i) => ({
      id: `usr_qc${rows}x${i}${shop.merchant.id.slice(-6)}`,
      merchantId: shop.merchant.id,
      email: `u${i}-${shop.merchant.id}@example.com`,
      passwordHash: "x",
    })),
  });
  const user = await createUser(app.db.prisma, shop.merchant.id, { email: `owner-${shop.merchant.id}@example.com`, password: PASSWORD }, OPERATOR);
  const res = await app.call("POST", "/dashboard/session", { key: null, body: { email: user.email, password: PASSWORD } });
  expect(res.status, res.text).toBe(201);
  return { key: shop.apiKeys.test.secret, session: { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": res.body.csrfToken as string } };
}

type Shop = Awaited<ReturnType<typeof shopWith>>;

/** How many SQL statements `query` sends for `shop`, checking it answered at least `rows` nodes at `path`. */
async function statements(shop: Shop, query: string, rows: number, path: (data: any) => unknown[]): Promise<number> {
  app.queries.length = 0;
  const headers = query.includes("users") ? shop.session : { "x-api-key": shop.key };
  const res = await app.call("POST", "/graphql", { key: null, body: { query }, headers });
  const count = app.queries.length;
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  expect(path(res.body.data).length).toBeGreaterThanOrEqual(rows);
  return count;
}

const PAGE = (fields: string) => `totalCount edges { cursor node { ${fields} } } pageInfo { endCursor hasNextPage }`;

const LISTS: [string, string, (rows: number) => number, (data: any) => unknown[]][] = [
  [
    "charges with payments, events (and their deliveries), refunds, customer, invoice and payment link",
    `{ charges(first: 100) { ${PAGE("id payments { txHash } events { id deliveries { url } } refunds { id } customer { id } invoice { id } paymentLink { id }")} } }`,
    (rows) => rows * 2,
    (d) => d.charges.edges,
  ],
  [
    "customers with their charges, invoices and stats",
    `{ customers(first: 30) { ${PAGE(`id stats { chargeCount } charges(first: 1) { ${PAGE("id customer { id }")} } invoices(first: 1) { ${PAGE("id")} }`)} } }`,
    (rows) => rows,
    (d) => d.customers.edges,
  ],
  [
    "payment links with their charges (and their count alone, as the dashboard asks with first: 0)",
    `{ paymentLinks(first: 100) { ${PAGE(`id charges { ${PAGE("id paymentLink { id }")} } sold: charges(first: 0) { totalCount }`)} } }`,
    (rows) => rows,
    (d) => d.paymentLinks.edges,
  ],
  [
    "invoices with their customer and charges",
    `{ invoices(first: 100) { ${PAGE("id customer { id } charges { id payments { txHash } }")} } }`,
    (rows) => rows,
    (d) => d.invoices.edges,
  ],
  [
    "subscriptions with their plan, customer (and its count of subscriptions) and invoices",
    `{ subscriptions(first: 100) { ${PAGE(`id plan { id } customer { id subscriptions(first: 0) { totalCount } } invoices { ${PAGE("id subscription { id }")} }`)} } }`,
    (rows) => rows,
    (d) => d.subscriptions.edges,
  ],
  [
    "customers with their subscriptions",
    `{ customers(first: 100) { ${PAGE(`id subscriptions { ${PAGE("id plan { id }")} }`)} } }`,
    (rows) => rows,
    (d) => d.customers.edges,
  ],
  ["events with their deliveries", `{ events(first: 100) { ${PAGE("id deliveries { url }")} } }`, (rows) => rows * 2, (d) => d.events.edges],
  ["users with their recovery codes", `{ users { id email recoveryCodesRemaining } }`, (rows) => rows + 1, (d) => d.users],
];

describe("GraphQL lists read nested lists and counts once for the whole list", () => {
  let small: Shop;
  let large: Shop;
  beforeAll(async () => {
    small = await shopWith(2);
    large = await shopWith(20);
  }, 120_000);

  it.each(LISTS)("%s: 2 rows and 20 rows send as many statements", async (_name, query, rows, path) => {
    const few = await statements(small, query, rows(2), path);
    const many = await statements(large, query, rows(20), path);
    expect(many).toBe(few);
  });
});
