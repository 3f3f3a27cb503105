// Relay paging from the end: `last` without `before` reads the list's last records (its oldest, as
// lists are newest first), on every connection of Query and on the relation connections.
import { getNamedType, type GraphQLObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { schema } from "../../src/graphql/schema.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const PAGE = "edges { cursor } pageInfo { startCursor endCursor hasNextPage hasPreviousPage }";
type Page = { edges: { cursor: string }[]; pageInfo: { startCursor: string; endCursor: string; hasNextPage: boolean; hasPreviousPage: boolean } };

async function data(query: string, variables: Record<string, unknown> = {}) {
  const res = await app.gql(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
}

describe("last without before", () => {
  let customer: string;
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const c = await data(`mutation($i: CreateCustomerInput!) { createCustomer(input: $i) { id } }`, { i: { email: `last${i}@conn.example`, name: `L${i}` } });
      customer = c.createCustomer.id;
    }
    for (let i = 0; i < 3; i++) {
      await data(`mutation($i: CreateChargeInput!) { createCharge(input: $i) { id } }`, { i: { orderId: `last-${i}`, amount: "1.00", customerId: customer } });
    }
  });

  it("pages customers from the end, then backward from there", async () => {
    const all = ((await data(`{ customers(first: 100) { ${PAGE} } }`)).customers as Page).edges.map((e) => e.cursor);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const end = (await data(`{ customers(last: 2) { ${PAGE} } }`)).customers as Page;
    expect(end.edges.map((e) => e.cursor)).toEqual(all.slice(-2));
    expect(end.pageInfo).toEqual({ startCursor: all.at(-2), endCursor: all.at(-1), hasNextPage: false, hasPreviousPage: true });
    const before = (await data(`query($b: String) { customers(last: 1, before: $b) { ${PAGE} } }`, { b: end.pageInfo.startCursor })).customers as Page;
    expect(before.edges.map((e) => e.cursor)).toEqual([all.at(-3)]);
  });

  it("pages a customer's charges (a relation) from the end", async () => {
    const query = `query($id: ID!, $first: Int, $last: Int) { customer(id: $id) { charges(first: $first, last: $last) { ${PAGE} } } }`;
    const all = ((await data(query, { id: customer, first: 100 })).customer.charges as Page).edges.map((e) => e.cursor);
    expect(all).toHaveLength(3);
    const end = (await data(query, { id: customer, last: 2 })).customer.charges as Page;
    expect(end.edges.map((e) => e.cursor)).toEqual(all.slice(-2));
    expect(end.pageInfo.hasPreviousPage).toBe(true);
  });

  it("refuses first and last together (no keyset page is both)", async () => {
    const res = await app.gql(`{ customers(first: 2, last: 1) { ${PAGE} } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: "parameter_invalid", param: "last" });
  });

  it("is taken by every connection of Query", async () => {
    const fields = Object.values((schema.getQueryType() as GraphQLObjectType).getFields()).filter((f) => getNamedType(f.type).name.endsWith("Connection"));
    expect(fields.length).toBeGreaterThanOrEqual(8);
    // The session-only ones (the security history) are asked by an owner's session.
    const owner = await createUser(app.db.prisma, app.merchant.merchant.id, { email: "last-owner@conn.example", password: "a long enough password" }, OPERATOR);
    const signIn = await app.call("POST", "/dashboard/session", { key: null, body: { email: owner.email, password: "a long enough password" } });
    const headers = { cookie: signIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signIn.body.csrfToken };
    for (const field of fields) {
      const query = `{ ${field.name}(last: 1) { ${PAGE} } }`;
      let res = await app.gql(query);
      if (res.errors?.[0]?.extensions?.code === "session_required") res = (await app.call("POST", "/graphql", { key: null, body: { query }, headers })).body;
      expect(res.errors, field.name).toBeUndefined();
      expect(res.data[field.name].pageInfo.hasNextPage, field.name).toBe(false);
    }
  });
});
