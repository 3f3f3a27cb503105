// GET /v1/openapi.json: a valid OpenAPI 3.1 document (checked by a real validator) that names every
// /v1 route the service serves, with the key scheme, the idempotency header and every error status.
// That each answer matches it is checked on every /v1 call of the suite (helpers/contract.ts).
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { guardedRoutes } from "../../src/http/input-guard.js";
import { Contract } from "../helpers/contract.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
let doc: any;
beforeAll(async () => {
  app = await startApp();
  const res = await fetch(`${app.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = await res.json();
});
afterAll(() => app?.stop());

it("is a valid OpenAPI 3.1 document", async () => {
  expect(doc.openapi).toBe("3.1.0");
  const result = await new Validator().validate(doc);
  expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
  expect(result.valid).toBe(true);
});

it("documents every /v1 route the service serves, once, with a unique operation id", () => {
  const served = guardedRoutes()
    .filter((r) => r.url.startsWith("/v1/") && !["HEAD", "OPTIONS"].includes(r.method))
    .map((r) => `${r.method.toLowerCase()} ${r.url.replace(/:(\w+)/g, "{$1}")}`);
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m} ${path}`));
  expect(documented.sort()).toEqual(served.filter((r) => r !== "get /v1/openapi.json").sort());
  const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops as Record<string, { operationId: string }>).map((o) => o.operationId));
  expect(new Set(ids).size).toBe(ids.length);
});

it("says how to authenticate, retry safely and read every error", () => {
  expect(doc.components.securitySchemes.ApiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }));
  const create = doc.paths["/v1/charges"].post;
  expect(create.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
  expect(create.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["orderId", "amount"]));
  expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "409", "429", "500"]));
  expect(create.responses["409"].description).toMatch(/duplicate_order_id/);
  expect(create.responses["429"].headers["Retry-After"]).toBeDefined();
  expect(create.responses["201"].headers["RateLimit-Remaining"]).toBeDefined();
  // The hosted page's routes need no key.
  expect(doc.paths["/v1/public/charges/{id}"].get.security).toEqual([]);
  // Examples, each a body the document itself accepts.
  const contract = new Contract(doc);
  for (const [path, op] of [
    ["/v1/charges", create],
    ["/v1/customers", doc.paths["/v1/customers"].post],
    ["/v1/webhook_endpoints", doc.paths["/v1/webhook_endpoints"].post],
  ]) {
    const example = op.requestBody.content["application/json"].example;
    expect(example, path).toBeDefined();
    expect(contract.requestBodyProblem("POST", path, example), path).toBeNull();
  }
  // Amounts are strings, never numbers.
  expect(create.responses["201"].content["application/json"].schema.properties.amount.type).toBe("string");
});

it("refuses nothing it documents: a documented request gets a documented answer", async () => {
  // The harness checks each exchange against the document; a few of each kind here.
  const customer = await app.call("POST", "/v1/customers", { body: { email: "doc@example.com", name: "Doc" } });
  expect(customer.status).toBe(201);
  expect((await app.call("GET", `/v1/customers/${customer.body.id}?expand=stats`)).status).toBe(200);
  expect((await app.call("POST", "/v1/charges", { body: { orderId: "doc-1", amount: "1.50", customerId: customer.body.id } })).status).toBe(201);
  expect((await app.call("POST", "/v1/charges", { body: { orderId: "doc-1", amount: "1.50" } })).status).toBe(409);
  expect((await app.call("GET", "/v1/charges?limit=1")).status).toBe(200);
  expect((await app.call("GET", "/v1/customers/cus_nothere")).status).toBe(404);
  // The document's examples work as they are. (The webhook endpoint's names a host, which saving
  // would look up: not from a test.)
  for (const path of ["/v1/customers", "/v1/charges"]) {
    const example = doc.paths[path].post.requestBody.content["application/json"].example;
    expect((await app.call("POST", path, { body: example })).status, path).toBe(201);
  }
});

it("the contract check fails a wrong answer, an undocumented status or route, and an accepted body the document refuses", async () => {
  const contract = new Contract(doc);
  const customer = (await app.call("POST", "/v1/customers", { body: { email: "shape@example.com", name: "Shape" } })).body;
  expect(contract.problem("GET", `/v1/customers/${customer.id}`, undefined, 200, customer)).toBeNull();
  expect(contract.problem("GET", `/v1/customers/${customer.id}`, undefined, 200, { ...customer, created: "yesterday" })).toMatch(/200 answer/);
  expect(contract.problem("GET", `/v1/customers/${customer.id}`, undefined, 418, {})).toMatch(/does not list/);
  expect(contract.problem("GET", "/v1/hidden_things", undefined, 200, {})).toMatch(/not in the document/);
  expect(contract.problem("POST", "/v1/customers", { email: 7, name: "N" }, 201, customer)).toMatch(/request body the document refuses/);
});

it("serves /docs and its Swagger UI from this process, gzipped, under a CSP without inline scripts", async () => {
  const page = await fetch(`${app.url}/docs`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self';/);
  // Public, so within the address's budget for callers without a key (the document too).
  expect(page.headers.get("ratelimit-limit")).toBeTruthy();
  expect((await fetch(`${app.url}/v1/openapi.json`)).headers.get("ratelimit-limit")).toBeTruthy();
  const html = await page.text();
  expect(html).toMatch(/<script src="\/docs\/swagger-ui-bundle.js"><\/script>/);
  expect(html).not.toMatch(/<script>/);
  const bundle = await fetch(`${app.url}/docs/swagger-ui-bundle.js`, { headers: { "accept-encoding": "gzip" } });
  expect(bundle.headers.get("content-encoding")).toBe("gzip");
  expect((await bundle.text()).length).toBeGreaterThan(500_000);
  expect(await (await fetch(`${app.url}/docs/init.js`)).text()).toMatch(/url: "\/v1\/openapi.json"/);
});
