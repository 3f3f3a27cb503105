import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharge } from "../../src/domain/charges/create.js";
import { createSchema } from "../../src/domain/charges/requests.js";
import { parseInput } from "../../src/domain/validation.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const FIELDS =
  "id livemode orderId amount amountReceived amountOverpaid amountRefunded feeAmount netAmount currency status cloneAddress chainId paymentUrl explorerUrl feeBps flushTxHash expiresAt createdAt completedAt deployedAt description customerEmail metadata successUrl cancelUrl payoutBlockedReason needsReview reviewReason strayAssets { chainId token amount } settlements { txHash blockNumber amount netAmount feeAmount confirmedAt }";
const CREATE = `mutation($input: CreateChargeInput!) { createCharge(input: $input) { ${FIELDS} customer { id } invoice { id } paymentLink { id } } }`;
const extensionsOf = (r: { errors?: any[] }) => r.errors?.[0]?.extensions;

describe("charges over GraphQL", () => {
  it("creates, reads by id, node and order, and cancels with the REST rules and the same object", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "gc@example.com", name: "GC" } })).body;
    const created = await app.gql(CREATE, { input: { orderId: "g-1", amount: "19.9", customerId: customer.id, metadata: { k: "v" } } });
    expect(created.errors).toBeUndefined();
    const c = created.data.createCharge;
    expect(c).toMatchObject({ orderId: "g-1", amount: "19.90", status: "PENDING", currency: "USDC", customer: { id: customer.id } });

    const rest = (await app.call("GET", `/v1/charges/${c.id}`)).body;
    // GraphQL links records where REST names their ids.
    const { object, customerId, invoiceId, paymentLinkId, ...restFields } = rest;
    const { customer: _, invoice, paymentLink, ...gqlFields } = c;
    expect(gqlFields).toEqual(restFields);
    expect(customerId).toBe(customer.id);
    expect([invoiceId, paymentLinkId, invoice, paymentLink]).toEqual([null, null, null, null]);

    const read = await app.gql(
      `query($id: ID!, $order: String!) { charge(id: $id) { id } chargeByOrderId(orderId: $order) { id } node(id: $id) { id ... on Charge { amount } } }`,
      { id: c.id, order: "g-1" },
    );
    expect(read.data).toEqual({ charge: { id: c.id }, chargeByOrderId: { id: c.id }, node: { id: c.id, amount: "19.90" } });

    const dup = await app.gql(CREATE, { input: { orderId: "g-1", amount: "1" } });
    expect(extensionsOf(dup)).toMatchObject({ code: "duplicate_order_id", param: "orderId", statusCode: 409 });

    const cancel = `mutation($id: ID!) { cancelCharge(id: $id) { id status } }`;
    expect((await app.gql(cancel, { id: c.id })).data.cancelCharge).toEqual({ id: c.id, status: "CANCELLED" });
    expect((await app.gql(cancel, { id: c.id })).data.cancelCharge).toEqual({ id: c.id, status: "CANCELLED" });
    await app.db.prisma.charge.update({ where: { id: c.id }, data: { status: "EXPIRED" } });
    expect(extensionsOf(await app.gql(cancel, { id: c.id }))).toMatchObject({ code: "charge_not_cancellable", statusCode: 409 });

    const other = await app.newMerchant();
    const foreign = await app.gql(`query($id: ID!) { charge(id: $id) { id } }`, { id: c.id }, other.apiKeys.test.secret);
    expect(extensionsOf(foreign)).toMatchObject({ code: "resource_missing", statusCode: 404 });
  });

  it.each([
    [{ orderId: "v1", amount: "0" }, "parameter_invalid", "amount"],
    [{ orderId: "v2", amount: "1.1234567" }, "parameter_invalid", "amount"],
    [{ orderId: "v3", amount: "1", expiresInMinutes: 1 }, "parameter_invalid", "expiresInMinutes"],
    [{ orderId: "v4", amount: "1", customerId: "cus_nope" }, "resource_missing", "customerId"],
    [{ orderId: "v5", amount: "1", successUrl: "nope" }, "parameter_invalid", "successUrl"],
    [{ orderId: "", amount: "1" }, "parameter_invalid", "orderId"],
  ])("validation %j → %s", async (input, code, param) => {
    const before = await app.db.prisma.charge.count();
    expect(extensionsOf(await app.gql(CREATE, { input }))).toMatchObject({ code, param, statusCode: 400 });
    expect(await app.db.prisma.charge.count()).toBe(before);
  });

  it("lists with filters, totalCount and cursors; Customer.charges is a connection", async () => {
    const shop = await app.newMerchant();
    const key = shop.apiKeys.test.secret;
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "l@example.com", name: "L" }, key })).body;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = { orderId: `l-${i}`, amount: "2", ...(i % 2 === 0 && { customerId: customer.id }) };
      ids.unshift((await app.call("POST", "/v1/charges", { body, key })).body.id);
    }
    await app.call("DELETE", `/v1/charges/${ids[0]}`, { key });

    const page = `query($after: String) { charges(first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res: any = await app.gql(page, { after }, key);
      expect(res.data.charges.totalCount).toBe(5);
      seen.push(...res.data.charges.edges.map((e: any) => e.node.id));
      if (!res.data.charges.pageInfo.hasNextPage) break;
      after = res.data.charges.pageInfo.endCursor;
    }
    expect(seen).toEqual(ids);

    const filtered = await app.gql(
      `query($c: ID!) { pending: charges(status: PENDING) { totalCount } mine: charges(customerId: $c) { totalCount edges { node { id } } } }`,
      { c: customer.id },
      key,
    );
    expect(filtered.data.pending.totalCount).toBe(4);
    expect(filtered.data.mine.edges.map((e: any) => e.node.id)).toEqual([ids[0], ids[2], ids[4]]);

    const related = await app.gql(`query($id: ID!) { customer(id: $id) { charges(first: 2) { totalCount edges { node { id } } } } }`, { id: customer.id }, key);
    expect(related.data.customer.charges).toEqual({ totalCount: 3, edges: [{ node: { id: ids[0] } }, { node: { id: ids[2] } }] });
  });

  it("lists 100 charges with their customers in a bounded number of SQL queries", async () => {
    const shop = await app.newMerchant();
    const key = shop.apiKeys.test.secret;
    const customers = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => (await app.call("POST", "/v1/customers", { body: { email: `q${i}@example.com`, name: `Q${i}` }, key })).body),
    );
    // Straight through the domain: 100 creates would exceed the key's per-minute create limit.
    const scope = { merchantId: shop.merchant.id, livemode: false };
    const settings = { amount: { min: 1n, max: 10n ** 12n }, paymentBaseUrl: "http://pay.test" };
    for (let i = 0; i < 100; i++)
      await createCharge(app.db.prisma, scope, parseInput(createSchema, { orderId: `q-${i}`, amount: "1", customerId: customers[i % 10].id }), settings);
    app.queries.length = 0;
    const res = await app.gql(
      `{ charges(first: 100) { totalCount edges { node { id amount customer { id email stats { chargeCount totalSpent } } } } } }`,
      undefined,
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.charges.edges).toHaveLength(100);
    expect(res.data.charges.edges.every((e: any) => e.node.customer.stats.chargeCount === 10)).toBe(true);
    // Charges, their customers (one batched query), the count, and the three grouped stats queries.
    expect(app.queries.length).toBe(6);
  });
});
