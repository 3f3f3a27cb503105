// GET /v1/openapi.json: a valid OpenAPI 3.1 document (checked by a real validator) that names every
// /v1 route the service serves, with the key scheme, the idempotency header and every error status;
// every resource a named schema, and a webhooks section whose payloads are the events as sent.
// That each answer matches it is checked on every /v1 call of the suite (helpers/contract.ts).
import { Validator } from "@seriousme/openapi-schema-validator";
import { pino } from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/domain/events.js";
import { createWebhookEndpoint } from "../../src/domain/webhook-endpoints.js";
import { STATUS_OF_CODE } from "../../src/http/errors.js";
import { guardedRoutes } from "../../src/http/input-guard.js";
import { startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import { Contract } from "../helpers/contract.js";
import { startApp, type TestApp } from "../helpers/harness.js";
import { startReceiver } from "../helpers/receiver.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";

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
  expect(create.parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
  expect(doc.components.parameters.IdempotencyKey).toEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header" }));
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
  expect(create.responses["201"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Charge" });
  expect(doc.components.schemas.Charge.properties.amount.type).toBe("string");
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

/** Every operation of the document, webhooks included, with where it is. */
function operations(): { at: string; op: any }[] {
  return [...Object.entries(doc.paths), ...Object.entries(doc.webhooks)].flatMap(([path, ops]) =>
    Object.entries(ops as Record<string, any>).map(([method, op]) => ({ at: `${method} ${path}`, op })),
  );
}

/** Every schema object inside `node`, depth first. */
function* schemasIn(node: unknown): Generator<Record<string, any>> {
  if (node === null || typeof node !== "object") return;
  if (!Array.isArray(node)) yield node as Record<string, any>;
  for (const child of Object.values(node)) yield* schemasIn(child);
}

describe("a document to generate clients from", () => {
  it("names every resource once and refers to it by $ref wherever it appears", () => {
    const schemas = doc.components.schemas;
    for (const name of ["Charge", "Customer", "Refund", "Invoice", "PaymentLink", "WebhookEndpoint", "Event", "BalanceTransaction", "Balance", "Error"]) {
      expect(schemas[name], name).toBeDefined();
    }
    // A resource is an object with an `object` constant: outside components.schemas, none is spelt out.
    const kinds = new Set(Object.values(schemas).flatMap((s: any) => (s.properties?.object?.const ? [s.properties.object.const] : [])));
    for (const kind of ["charge", "customer", "refund", "invoice", "payment_link", "webhook_endpoint", "balance_transaction"])
      expect(kinds, kind).toContain(kind);
    const inline = [...schemasIn({ paths: doc.paths, webhooks: doc.webhooks })].filter((s) => kinds.has(s.properties?.object?.const));
    expect(inline.map((s) => s.properties.object.const)).toEqual([]);
    // And every named schema is used.
    const text = JSON.stringify(doc);
    for (const name of Object.keys(schemas)) expect(text, name).toContain(`"#/components/schemas/${name}"`);
  });

  it("describes and tags every operation, under tags declared at the top, with an example answer that matches", () => {
    const declared = new Map(doc.tags.map((t: { name: string; description: string }) => [t.name, t.description]));
    const contract = new Contract(doc);
    for (const { at, op } of operations()) {
      expect(op.description, at).toMatch(/\w/);
      expect(op.tags, at).toHaveLength(1);
      expect(declared.get(op.tags[0]), at).toMatch(/\w/);
      if (at.startsWith("post ") && doc.webhooks[at.slice(5)]) continue;
      const examples = Object.values(op.responses).flatMap((r: any) => Object.values(r.content ?? {}).filter((m: any) => "example" in m));
      expect(examples.length, at).toBeGreaterThan(0);
      for (const media of examples as { schema: object; example: unknown }[]) {
        if ((media.schema as { format?: string }).format !== "binary") expect(contract.schemaProblem(media.schema, media.example), at).toBeNull();
      }
    }
  });

  it("types what it can: every error code, limit as an integer 1–100, the secret where it is returned", () => {
    expect(doc.components.schemas.Error.properties.code.enum.sort()).toEqual(Object.keys(STATUS_OF_CODE).sort());
    expect(doc.components.schemas.Error.required).toContain("docUrl");
    const limits = operations().flatMap(({ op }) => (op.parameters ?? []).filter((p: { name: string }) => p.name === "limit"));
    expect(limits.length).toBeGreaterThanOrEqual(8);
    for (const limit of limits) expect(limit.schema).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 10 });
    const answer = (path: string, method: string, status: number) => doc.paths[path][method].responses[status].content["application/json"].schema;
    const withSecret = { $ref: "#/components/schemas/WebhookEndpointWithSecret" };
    expect(answer("/v1/webhook_endpoints", "post", 201)).toEqual(withSecret);
    expect(answer("/v1/webhook_endpoints/{id}/rotate_secret", "post", 200)).toEqual(withSecret);
    expect(doc.components.schemas.WebhookEndpointWithSecret.required).toContain("secret");
    expect(doc.components.schemas.WebhookEndpoint.properties.secret).toBeUndefined();
  });
});

describe("webhooks", () => {
  it("has one entry per event type the service sends, its payload the event with the resource's own schema", () => {
    // The fields only some events carry, declared on those events' schemas and never on the resource.
    const extras: Record<string, string[]> = {
      "charge.partial": ["payments"],
      "charge.received": ["payments", "underpaidAmount"],
      "charge.completed": ["underpaidAmount", "overpaidAmount"],
      "charge.late_payment": ["payments"],
      "customer.deleted": ["deleted"],
      "invoice.deleted": ["deleted"],
    };
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const { $ref } = doc.webhooks[type].post.requestBody.content["application/json"].schema;
      const payload = doc.components.schemas[$ref.split("/").pop()];
      expect(payload.properties.type, type).toEqual({ type: "string", const: type });
      // A renewal's notice is about the subscription: its invoice does not exist yet.
      const resource =
        type === "invoice.upcoming"
          ? "Subscription"
          : { charge: "Charge", customer: "Customer", refund: "Refund", invoice: "Invoice", subscription: "Subscription", x402: "X402Payment" }[
              type.split(".")[0]!
            ];
      const own = doc.components.schemas[resource!];
      for (const field of Object.values(extras).flat()) expect(own.properties[field], `${resource}.${field}`).toBeUndefined();
      const added = extras[type];
      if (!added) {
        expect(payload.properties.data, type).toEqual({ $ref: `#/components/schemas/${resource}` });
        continue;
      }
      const { properties, required } = payload.properties.data;
      expect(Object.keys(properties).sort(), type).toEqual([...Object.keys(own.properties), ...added].sort());
      for (const [name, schema] of Object.entries(own.properties)) expect(properties[name], `${type} ${name}`).toEqual(schema);
      expect(required.sort(), type).toEqual([...own.required, ...added.filter((f) => f === "deleted")].sort());
    }
    expect(doc.components.schemas.Event.oneOf).toHaveLength(EVENT_TYPES.length);
  });

  it("matches what endpoints receive: every type's mock event and the events of real changes", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const receiver = await startReceiver();
    const { secret } = await createWebhookEndpoint(
      app.db.prisma,
      { merchantId: merchant.merchant.id, livemode: false },
      { url: receiver.url, events: [] },
      OPERATOR_ACTOR,
    );
    const dispatcher = startWebhookDispatcher(app.db.prisma, pino({ level: "silent" }), { intervalMs: 20 });
    try {
      for (const type of EVENT_TYPES) expect((await app.call("POST", "/v1/webhooks/test", { key, body: { type } })).status, type).toBe(201);
      // Real changes, each with its events.
      const customer = (await app.call("POST", "/v1/customers", { key, body: { email: "hooks@example.com", name: "Hooks" } })).body;
      await app.call("PATCH", `/v1/customers/${customer.id}`, { key, body: { phone: "+49 30 1234567" } });
      const charge = (await app.call("POST", "/v1/charges", { key, body: { orderId: "hooks-1", amount: "12.00", customerId: customer.id } })).body;
      expect((await app.call("DELETE", `/v1/charges/${charge.id}`, { key })).status).toBe(200);
      const lineItems = [{ description: "Hours", quantity: 2, unitAmount: "50.00" }];
      const invoice = (await app.call("POST", "/v1/invoices", { key, body: { customerId: customer.id, lineItems } })).body;
      expect((await app.call("POST", `/v1/invoices/${invoice.id}/finalize`, { key })).status).toBe(200);
      expect((await app.call("POST", `/v1/invoices/${invoice.id}/void`, { key })).status).toBe(200);
      expect((await app.call("DELETE", `/v1/customers/${customer.id}`, { key })).status).toBe(200);
      const real = [
        "customer.created",
        "customer.updated",
        "charge.pending",
        "charge.cancelled",
        "invoice.created",
        "invoice.finalized",
        "invoice.voided",
        "customer.deleted",
      ];

      const received = await receiver.waitForCount(EVENT_TYPES.length + real.length);
      const contract = new Contract(doc);
      const types: string[] = [];
      for (const r of received) {
        const event = new Webhook(secret).verify(r.body, r.headers) as { type: string };
        types.push(event.type);
        expect(contract.webhookProblem(event.type, JSON.parse(r.body))).toBeNull();
      }
      expect(types.sort()).toEqual([...EVENT_TYPES, ...real].sort());
    } finally {
      await dispatcher.stop();
      await receiver.close();
    }
  });
});
