// One coercion rule (.docs/api.md "Types"): a JSON body is taken as typed (amounts are decimal strings,
// integers JSON integers, each refused in the other type with a message saying what to send), query
// parameters are text. The specification's string fields are strings: an address part not given is "".
// Every message names the real problem.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const invalid = async (method: string, path: string, body: unknown, param: string) => {
  const res = await app.call(method, path, { body });
  expectError(res, 400, "parameter_invalid", param);
  return res.body.message as string;
};

describe("JSON bodies are taken as typed", () => {
  it("refuses a numeric string for an integer, saying to send the number", async () => {
    const message = await invalid("POST", "/v1/charges", { orderId: "typed-1", amount: "25", expiresInMinutes: "30" }, "expiresInMinutes");
    expect(message).toBe('Invalid expiresInMinutes: must be a JSON integer, not a string: send 30, not "30"');
    const created = await app.call("POST", "/v1/charges", { body: { orderId: "typed-1", amount: "25", expiresInMinutes: 30 } });
    expect(created.status).toBe(201);
  });

  it("refuses a JSON number for an amount, saying to send it as a string", async () => {
    const message = await invalid("POST", "/v1/charges", { orderId: "typed-2", amount: 25 }, "amount");
    expect(message).toBe('Invalid amount: must be a decimal string such as "25.00", not a JSON number: send "25" (a float cannot carry money exactly)');
    expect(await invalid("POST", "/v1/plans", { name: "P", amount: 9.99, interval: "month" }, "amount")).toMatch(/send "9\.99"/);
  });

  it("applies the same rule to every integer and amount of a body", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "typed@example.com", name: "Typed" } })).body;
    const line = { description: "Hours", quantity: 2, unitAmount: "5.00" };
    expect(await invalid("POST", "/v1/invoices", { customerId: customer.id, lineItems: [{ ...line, quantity: "2" }] }, "lineItems[0].quantity")).toMatch(
      /must be a JSON integer, not a string: send 2/,
    );
    expect(await invalid("POST", "/v1/invoices", { customerId: customer.id, lineItems: [{ ...line, unitAmount: 5 }] }, "lineItems[0].unitAmount")).toMatch(
      /not a JSON number: send "5"/,
    );
    expect(await invalid("POST", "/v1/plans", { name: "P", amount: "9", interval: "month", intervalCount: "2" }, "intervalCount")).toMatch(/send 2, not "2"/);
    expect(await invalid("POST", "/v1/payment_links", { name: "L", amount: "3", quantityMax: "3" }, "quantityMax")).toMatch(/send 3, not "3"/);
  });

  it("reads a query parameter's integer from its text", async () => {
    const page = await app.call("GET", "/v1/charges?limit=1");
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expect(await app.call("GET", "/v1/charges?limit=0").then((r) => r.body.message)).toBe("Invalid limit: must be an integer between 1 and 100");
  });

  it("is the rule the OpenAPI document states", async () => {
    const doc = (await app.call("GET", "/v1/openapi.json")).body;
    expect(doc.info.description).toMatch(/integers are JSON integers, never numeric strings/);
    const charge = doc.paths["/v1/charges"].post.requestBody.content["application/json"].schema;
    expect(charge.properties.expiresInMinutes.type).toBe("integer");
    expect(charge.properties.amount.type).toBe("string");
  });
});

describe("messages name the real problem", () => {
  it("says a metadata key is too long", async () => {
    const key = "k".repeat(41);
    const message = await invalid("POST", "/v1/customers", { email: "meta@example.com", name: "M", metadata: { [key]: "v" } }, `metadata.${key}`);
    expect(message).toBe(`Invalid metadata.${key}: this key is too long: 41 characters, at most 40`);
  });

  it("says a metadata value is too long, and which types a value may have", async () => {
    const base = { email: "meta2@example.com", name: "M" };
    expect(await invalid("POST", "/v1/customers", { ...base, metadata: { a: "x".repeat(501) } }, "metadata.a")).toBe(
      "Invalid metadata.a: must be at most 500 characters",
    );
    expect(await invalid("POST", "/v1/customers", { ...base, metadata: { a: [1] } }, "metadata.a")).toMatch(/values must be strings/);
  });
});

describe("address parts are strings", () => {
  it('gives a part not given as "", and takes the address back as it was read', async () => {
    const created = await app.call("POST", "/v1/customers", { body: { email: "addr@example.com", name: "Addr", address: { city: "Lyon" } } });
    expect(created.body.address).toEqual({ line1: "", line2: "", city: "Lyon", state: "", postalCode: "", country: "" });
    const { address } = created.body;
    const again = await app.call("PATCH", `/v1/customers/${created.body.id}`, { body: { address: { ...address, line1: "3 Quai" } } });
    expect(again.status, again.text).toBe(200);
    expect(again.body.address).toEqual({ ...address, line1: "3 Quai" });
    // GraphQL's Address says "not given" its own way: null, never "".
    const gql = await app.gql(`query($id: ID!) { customer(id: $id) { address { line1 line2 city country } } }`, { id: created.body.id });
    expect(gql.data.customer.address).toEqual({ line1: "3 Quai", line2: null, city: "Lyon", country: null });
  });

  it('keeps null for an address with no part given ("" everywhere included)', async () => {
    const empty = { line1: "", line2: "", city: "", state: "", postalCode: "", country: "" };
    const res = await app.call("POST", "/v1/customers", { body: { email: "noaddr@example.com", name: "No", address: empty } });
    expect(res.status).toBe(201);
    expect(res.body.address).toBeNull();
  });

  it("is typed string, never null, in the OpenAPI document, in one Address schema", async () => {
    const doc = (await app.call("GET", "/v1/openapi.json")).body;
    const address = doc.components.schemas.Address;
    for (const part of ["line1", "line2", "city", "state", "postalCode", "country"]) expect(address.properties[part].type).toBe("string");
    expect(address.required).toHaveLength(6);
    expect(JSON.stringify(doc.components.schemas.Customer.properties.address)).toContain("#/components/schemas/Address");
  });
});
