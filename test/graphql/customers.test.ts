import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { printedSchema } from "../../src/graphql/schema.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const FIELDS =
  "id livemode email name phone companyName taxId description metadata created updated createdAt updatedAt address { line1 line2 city state postalCode country }";
const CREATE = `mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { ${FIELDS} } }`;
const codeOf = (r: { errors?: any[] }) => r.errors?.[0]?.extensions?.code;

describe("schema", () => {
  it("schema.graphql matches the code (run `npm run schema` after changing types)", () => {
    expect(readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8")).toBe(printedSchema());
  });
});

describe("customers over GraphQL", () => {
  it("creates, reads, updates and deletes with the REST rules", async () => {
    const created = await app.gql(CREATE, { input: { email: "g@example.com", name: "Gee", address: { country: "nl" }, metadata: { a: "1", b: 2 } } });
    expect(created.errors).toBeUndefined();
    const c = created.data.createCustomer;
    expect(c).toMatchObject({ email: "g@example.com", livemode: false, phone: null, address: { country: "NL", line1: null }, metadata: { a: "1", b: 2 } });
    // The same object as REST, but for the address: a part not given is null here, "" there.
    const rest = await app.call("GET", `/v1/customers/${c.id}`);
    expect({ ...rest.body, object: undefined, address: undefined }).toEqual({ ...c, object: undefined, address: undefined });
    expect(rest.body.address).toEqual({ line1: "", line2: "", city: "", state: "", postalCode: "", country: "NL" });

    const read = await app.gql(`query($id: ID!) { customer(id: $id) { id name } node(id: $id) { id ... on Customer { email } } }`, { id: c.id });
    expect(read.data).toEqual({ customer: { id: c.id, name: "Gee" }, node: { id: c.id, email: "g@example.com" } });

    const updated = await app.gql(
      `mutation($id: ID!, $input: UpdateCustomerInput!) { updateCustomer(id: $id, input: $input) { name phone metadata address { country } } }`,
      {
        id: c.id,
        input: { name: "G2", phone: null, metadata: { a: null, c: true }, address: null },
      },
    );
    expect(updated.data.updateCustomer).toEqual({ name: "G2", phone: null, metadata: { b: 2, c: true }, address: null });

    const dup = await app.gql(CREATE, { input: { email: "G@EXAMPLE.com", name: "Dup" } });
    expect(dup.errors?.[0].extensions).toMatchObject({ code: "customer_email_exists", param: "email", statusCode: 409 });
    expect(dup.data).toBeNull();

    const del = await app.gql(`mutation($id: ID!) { deleteCustomer(id: $id) { id deleted } }`, { id: c.id });
    expect(del.data.deleteCustomer).toEqual({ id: c.id, deleted: true });
    expect(codeOf(await app.gql(`mutation($id: ID!) { deleteCustomer(id: $id) { id } }`, { id: c.id }))).toBe("resource_missing");
  });

  it.each([
    [{ email: "bad", name: "A" }, "parameter_invalid", "email"],
    [{ email: "a@b.co", name: "" }, "parameter_invalid", "name"],
    [{ email: "a@b.co", name: "A", address: { country: "XX" } }, "parameter_invalid", "address.country"],
    [{ email: "a@b.co", name: "A", metadata: { a: { nested: 1 } } }, "parameter_invalid", "metadata.a"],
    [{ email: "a@b.co", name: "A", description: "d".repeat(1001) }, "parameter_invalid", "description"],
  ])("validation %j → %s", async (input, code, param) => {
    const before = await app.db.prisma.customer.count();
    const res = await app.gql(CREATE, { input });
    expect(res.errors?.[0].extensions).toMatchObject({ code, param });
    expect(await app.db.prisma.customer.count()).toBe(before);
  });

  it("lists the countries an address may name (codes with English names), the same list that refuses any other code", async () => {
    const { data } = await app.gql("{ countries { code name } }");
    expect(data.countries).toHaveLength(249);
    expect(data.countries).toContainEqual({ code: "DE", name: "Germany" });
    expect(data.countries).toContainEqual({ code: "GE", name: "Georgia" });
    const codes = data.countries.map((c: { code: string }) => c.code);
    expect(codes).toEqual([...codes].sort());
    for (const country of ["DE", "ge", "AX"]) {
      const ok = await app.gql(CREATE, { input: { email: `country-${country}@example.com`, name: "Where", address: { country } } });
      expect(ok.errors).toBeUndefined();
    }
    const refused = await app.gql(CREATE, { input: { email: "country-xk@example.com", name: "Where", address: { country: "XK" } } });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "parameter_invalid", param: "address.country" });
  });

  it("needs a key for merchant data and isolates merchants and modes", async () => {
    expect(codeOf(await app.gql("{ customers(first: 1) { totalCount } }", {}, null))).toBe("api_key_missing");
    expect(codeOf(await app.gql("{ customers(first: 1) { totalCount } }", {}, "sk_test_nopenopenopenopenopenopenopenope"))).toBe("api_key_invalid");
    const mine = (await app.gql(CREATE, { input: { email: "iso@example.com", name: "Iso" } })).data.createCustomer.id;
    const other = await app.newMerchant();
    for (const key of [other.apiKeys.test.secret, app.liveKey]) {
      expect(codeOf(await app.gql(`query($id: ID!) { customer(id: $id) { id } }`, { id: mine }, key))).toBe("resource_missing");
      const node = await app.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: mine }, key);
      expect(node.data?.node ?? null).toBeNull();
    }
  });

  it("pages a connection with totalCount and filters", async () => {
    const m = await app.newMerchant();
    const key = m.apiKeys.test.secret;
    for (let i = 0; i < 7; i++) await app.gql(CREATE, { input: { email: `p${i}@page.example`, name: i === 3 ? "Needle" : `P${i}` } }, key);
    const q = `query($after: String, $query: String) { customers(first: 3, after: $after, query: $query) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { email } } } }`;
    const p1 = (await app.gql(q, {}, key)).data.customers;
    expect(p1.totalCount).toBe(7);
    expect(p1.edges.map((e: any) => e.node.email)).toEqual(["p6@page.example", "p5@page.example", "p4@page.example"]);
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p3 = (await app.gql(q, { after: (await app.gql(q, { after: p1.pageInfo.endCursor }, key)).data.customers.pageInfo.endCursor }, key)).data.customers;
    expect(p3.edges.map((e: any) => e.node.email)).toEqual(["p0@page.example"]);
    expect(p3.pageInfo.hasNextPage).toBe(false);
    const found = (await app.gql(q, { query: "needle" }, key)).data.customers;
    expect(found).toMatchObject({ totalCount: 1, edges: [{ node: { email: "p3@page.example" } }] });
    const byEmail = await app.gql(`{ customers(first: 5, email: "P2@PAGE.example") { edges { node { email } } } }`, {}, key);
    expect(byEmail.data.customers.edges).toEqual([{ node: { email: "p2@page.example" } }]);
    expect(codeOf(await app.gql("{ customers(first: 500) { totalCount } }", {}, key))).toBe("parameter_invalid");
  });

  it("lists 50 customers with stats in a bounded number of SQL queries", async () => {
    const m = await app.newMerchant();
    const key = m.apiKeys.test.secret;
    for (let i = 0; i < 50; i++) await app.gql(CREATE, { input: { email: `s${i}@stats.example`, name: `S${i}` } }, key);
    const q = "{ customers(first: 50) { totalCount edges { node { id stats { chargeCount invoiceCount totalSpent } } } } }";
    await app.gql(q, {}, key); // warm the key cache
    app.queries.length = 0;
    const res = await app.gql(q, {}, key);
    expect(res.data.customers.edges).toHaveLength(50);
    expect(res.data.customers.edges[0].node.stats).toEqual({ chargeCount: 0, invoiceCount: 0, totalSpent: "0.00" });
    // list + count + three grouped stats queries, whatever the number of customers.
    expect(app.queries.length).toBeLessThanOrEqual(6);
  });

  it("limits depth (introspection by a limit of its own, introspection.test.ts) and aliases", async () => {
    const nested = (n: number): string => (n === 0 ? "name" : `ofType { ${nested(n - 1)} }`);
    const deep = await app.gql(`{ __schema { types { fields { type { ${nested(30)} } } } } }`);
    expect(deep.errors?.[0]?.message).toMatch(/depth/i);
    const introspection = await app.gql(`{ __schema { types { fields { type { ${nested(7)} } } } } }`);
    expect(introspection.errors).toBeUndefined();
    const aliases = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: customers(first: 1) { totalCount }`).join(" ")} }`;
    expect((await app.gql(aliases)).errors?.[0]?.message).toMatch(/alias/i);
  });
});

describe("GraphiQL", () => {
  it("is served outside production only", async () => {
    const dev = await fetch(`${app.url}/graphql`, { headers: { accept: "text/html" } });
    expect(await dev.text()).toMatch(/graphiql/i);
    const prod = await startApp({ NODE_ENV: "production" });
    try {
      const res = await fetch(`${prod.url}/graphql`, { headers: { accept: "text/html" } });
      expect(await res.text()).not.toMatch(/graphiql/i);
    } finally {
      await prod.stop();
    }
  });
});
