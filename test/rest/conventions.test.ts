// REST conventions a Stripe user expects (issue 33, .docs/api.md "REST conventions"):
// cursor paging on charges, Authorization: Bearer, unknown query parameters refused everywhere,
// ISO createdAt on customers, the Stablegate-Version header and docUrl on every error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/rest/version.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";

const PUBLIC_URL = "https://api.shop.example";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ PUBLIC_URL, RATE_LIMIT_LIST: "1000", RATE_LIMIT_CREATE: "1000" });
});
afterAll(() => app?.stop());

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((r) => r.id);

describe("charges page by cursor too", () => {
  let key: string;
  /** The merchant's 7 charges, newest first as the list orders them. */
  let all: string[];
  beforeAll(async () => {
    key = (await app.newMerchant()).apiKeys.test.secret;
    for (let i = 0; i < 7; i++) await app.call("POST", "/v1/charges", { key, body: { orderId: `cursor-${i}`, amount: "5" } });
    all = ids(await app.call("GET", "/v1/charges?limit=100", { key }));
    expect(all).toHaveLength(7);
  });
  const list = async (qs: string) => {
    const res = await app.call("GET", `/v1/charges?${qs}`, { key });
    expect(res.status, res.text).toBe(200);
    return res;
  };

  it("pages forward with startingAfter and backward with endingBefore, hasMore each way, as a plain list", async () => {
    const second = await list(`limit=3&startingAfter=${all[2]}`);
    expect(second.body).toEqual({ object: "list", data: expect.any(Array), hasMore: true });
    expect(ids(second)).toEqual(all.slice(3, 6));
    const last = await list(`limit=3&startingAfter=${all[5]}`);
    expect(ids(last)).toEqual(all.slice(6));
    expect(last.body.hasMore).toBe(false);

    const back = await list(`limit=3&endingBefore=${all[6]}`);
    expect(ids(back)).toEqual(all.slice(3, 6));
    expect(back.body.hasMore).toBe(true);
    const first = await list(`limit=3&endingBefore=${all[2]}`);
    expect(ids(first)).toEqual(all.slice(0, 2));
    expect(first.body.hasMore).toBe(false);
  });

  it("keeps the filters with a cursor", async () => {
    const cancelled = all[4]!;
    await app.call("DELETE", `/v1/charges/${cancelled}`, { key });
    expect(ids(await list(`status=PENDING&startingAfter=${all[2]}`))).toEqual([all[3], all[5], all[6]]);
    expect(ids(await list(`status=CANCELLED&endingBefore=${all[6]}`))).toEqual([cancelled]);
  });

  it("still pages by number without a cursor", async () => {
    const page = await list("limit=3&page=2");
    expect(page.body).toMatchObject({ object: "list", page: 2, limit: 3, total: 7, hasMore: true });
    expect(ids(page)).toEqual(all.slice(3, 6));
    expect((await list("limit=3")).body).toMatchObject({ page: 1, limit: 3, total: 7, hasMore: true });
  });

  it.each([
    ["page=1&startingAfter=CURSOR", "parameter_invalid", "startingAfter"],
    ["page=2&endingBefore=CURSOR", "parameter_invalid", "endingBefore"],
    ["startingAfter=CURSOR&endingBefore=CURSOR", "parameter_invalid", "endingBefore"],
    [`startingAfter=chrg_${"x".repeat(24)}`, "resource_missing", "startingAfter"],
  ])("?%s → 400", async (qs, code, param) => {
    expectError(await app.call("GET", `/v1/charges?${qs.replaceAll("CURSOR", all[1]!)}`, { key }), 400, code, param);
  });

  it("refuses another merchant's charge as a cursor", async () => {
    expectError(await app.call("GET", `/v1/charges?startingAfter=${all[1]}`), 400, "resource_missing", "startingAfter");
  });
});

describe("Authorization: Bearer", () => {
  const bearer = (token: string, headers: Record<string, string> = {}) => ({ key: null, headers: { authorization: `Bearer ${token}`, ...headers } });

  it("works like X-API-Key, whatever the scheme's case, and the key still fixes the mode", async () => {
    const res = await app.call("POST", "/v1/customers", { ...bearer(app.liveKey), body: { email: "bearer@example.com", name: "Bearer" } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.livemode).toBe(true);
    expect(res.headers.get("ratelimit-limit")).not.toBeNull();
    const lower = await app.call("GET", `/v1/customers/${res.body.id}`, { key: null, headers: { authorization: `bearer ${app.liveKey}` } });
    expect(lower.status).toBe(200);
    expectError(await app.call("GET", `/v1/customers/${res.body.id}`, bearer(app.testKey)), 404, "resource_missing");
  });

  it("gives the same errors as X-API-Key", async () => {
    expectError(await app.call("GET", "/v1/customers", bearer("sk_test_nope")), 401, "api_key_invalid");
    expectError(await app.call("GET", "/v1/customers", bearer("")), 401, "api_key_missing");
    // A customer JWT is for POST /v1/customers/jwt only: elsewhere it is no API key.
    expectError(await app.call("GET", "/v1/customers", bearer("eyJhbGciOiJIUzI1NiJ9.eyJlbWFpbCI6ImFAYi5jbyJ9.c2ln")), 401, "api_key_invalid");
  });

  it("takes both headers naming the same key, and refuses different keys naming Authorization", async () => {
    expect((await app.call("GET", "/v1/customers", { headers: { authorization: `Bearer ${app.testKey}` } })).status).toBe(200);
    expectError(await app.call("GET", "/v1/customers", { headers: { authorization: `Bearer ${app.liveKey}` } }), 400, "parameter_invalid", "Authorization");
  });

  it("works on /graphql too", async () => {
    const query = 'mutation { createCustomer(input: { email: "gql-bearer@example.com", name: "Bearer" }) { livemode } }';
    const res = await app.call("POST", "/graphql", { ...bearer(app.liveKey), body: { query } });
    expect(res.body, res.text).toEqual({ data: { createCustomer: { livemode: true } } });
    const wrong = await app.call("POST", "/graphql", { ...bearer("sk_test_nope"), body: { query } });
    expect(wrong.body.errors[0].extensions.code).toBe("api_key_invalid");
  });

  it("leaves another scheme (a proxy's Basic credentials) alone", async () => {
    const basic = { authorization: `Basic ${Buffer.from("proxy:secret").toString("base64")}` };
    expect((await app.call("GET", "/v1/customers", { headers: basic })).status).toBe(200);
    expectError(await app.call("GET", "/v1/customers", { key: null, headers: basic }), 401, "api_key_missing");
  });
});

describe("unknown query parameters", () => {
  let charge: { id: string; orderId: string };
  let customer: string;
  beforeAll(async () => {
    customer = (await app.call("POST", "/v1/customers", { body: { email: "query@example.com", name: "Query" } })).body.id;
    charge = (await app.call("POST", "/v1/charges", { body: { orderId: "query-1", amount: "5", customerId: customer } })).body;
  });

  it.each([
    ["/v1/charges/ID?expand=customer", "expand"],
    ["/v1/charges/order/ORDER?expand=customer", "expand"],
    ["/v1/customers/CUSTOMER?limit=1", "limit"],
    ["/v1/balance?currency=usdc", "currency"],
    ["/v1/invoices/inv_x?expand=customer", "expand"],
  ])("GET %s → 400 parameter_unknown naming it", async (path, param) => {
    const url = path.replace("ID", charge.id).replace("ORDER", charge.orderId).replace("CUSTOMER", customer);
    expectError(await app.call("GET", url), 400, "parameter_unknown", param);
  });

  it("refuses them on the hosted page's reads and on writes too, changing nothing", async () => {
    expectError(await app.call("GET", `/v1/public/charges/${charge.id}?expand=merchant`, { key: null }), 400, "parameter_unknown", "expand");
    const before = await app.db.prisma.customer.count();
    expectError(await app.call("POST", "/v1/customers?expand=stats", { body: { email: "q2@example.com", name: "Q" } }), 400, "parameter_unknown", "expand");
    expect(await app.db.prisma.customer.count()).toBe(before);
  });

  it("still takes the parameters a route documents", async () => {
    const res = await app.call("GET", `/v1/customers/${customer}?expand=stats`);
    expect(res.status).toBe(200);
    expect(res.body.chargeCount).toBe(1);
  });
});

describe("customers' createdAt", () => {
  it("is ISO 8601 UTC, the same instant as created (Unix seconds), on every customer answer", async () => {
    const made = await app.call("POST", "/v1/customers", { body: { email: "iso@example.com", name: "Iso" } });
    const updated = await app.call("PATCH", `/v1/customers/${made.body.id}`, { body: { name: "Iso 2" } });
    const listed = (await app.call("GET", "/v1/customers?email=iso@example.com")).body.data[0];
    for (const c of [made.body, updated.body, listed]) {
      expect(c.createdAt).toMatch(ISO);
      expect(c.updatedAt).toMatch(ISO);
      expect(Math.floor(Date.parse(c.createdAt) / 1000)).toBe(c.created);
      expect(Math.floor(Date.parse(c.updatedAt) / 1000)).toBe(c.updated);
    }
    expect(updated.body.createdAt).toBe(made.body.createdAt);
  });
});

describe("Stablegate-Version", () => {
  const version = (res: { headers: Headers }) => res.headers.get("stablegate-version");

  it("names a date", () => {
    expect(API_VERSION).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  it("is answered on every /v1 answer, success or error, with or without the request header", async () => {
    expect(version(await app.call("GET", "/v1/customers"))).toBe(API_VERSION);
    expect(version(await app.call("GET", "/v1/customers", { headers: { "stablegate-version": API_VERSION } }))).toBe(API_VERSION);
    expect(version(await app.call("GET", "/v1/customers", { key: null }))).toBe(API_VERSION);
    expect(version(await app.call("GET", "/v1/nothing-here"))).toBe(API_VERSION);
    expect(version(await app.call("POST", "/v1/customers", { raw: "{", headers: { "content-type": "application/json" } }))).toBe(API_VERSION);
    expect(version(await fetch(`${app.url}/v1/openapi.json`))).toBe(API_VERSION);
    // Only the API's answers: not the health checks or the pages.
    expect(version(await fetch(`${app.url}/healthz`))).toBeNull();
  });

  it("is on an idempotent replay too", async () => {
    const send = () =>
      app.call("POST", "/v1/customers", { body: { email: "replay@example.com", name: "R" }, headers: { "idempotency-key": "version-replay" } });
    await send();
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(version(again)).toBe(API_VERSION);
  });

  it.each(["2020-01-01", "latest", ""])("refuses the unknown version %j naming the header, changing nothing", async (asked) => {
    const before = await app.db.prisma.customer.count();
    const res = await app.call("POST", "/v1/customers", { body: { email: "v@example.com", name: "V" }, headers: { "stablegate-version": asked } });
    expectError(res, 400, "parameter_invalid", "Stablegate-Version");
    expect(res.body.message).toContain(API_VERSION);
    expect(version(res)).toBe(API_VERSION);
    expect(await app.db.prisma.customer.count()).toBe(before);
  });
});

describe("docUrl", () => {
  it("points every error at its code's entry on /docs, under PUBLIC_URL", async () => {
    const answers = [
      await app.call("GET", "/v1/customers", { key: null }),
      await app.call("GET", "/v1/customers?sort=name"),
      await app.call("GET", `/v1/customers/cus_${"x".repeat(24)}`),
      await app.call("POST", "/v1/customers", { raw: "{", headers: { "content-type": "application/json" } }),
      await app.call("GET", "/nothing-here"),
    ];
    for (const res of answers) expect(res.body.docUrl).toBe(`${PUBLIC_URL}/docs#error-${res.body.code}`);
    expect(answers.map((r) => r.body.code)).toEqual(["api_key_missing", "parameter_unknown", "resource_missing", "body_invalid_json", "resource_missing"]);
    // /docs draws the OpenAPI document, whose introduction lists every code under its anchor.
    expect((await fetch(`${app.url}/docs`)).status).toBe(200);
    const intro: string = (await (await fetch(`${app.url}/v1/openapi.json`)).json()).info.description;
    for (const res of answers) expect(intro).toContain(`id="${new URL(res.body.docUrl).hash.slice(1)}"`);
  });
});
