// Idempotency, concurrency, rate limits and JWT creation on /v1/customers.
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RATE_LIMIT_LIST: "5" });
});
afterAll(() => app?.stop());

describe("Idempotency-Key", () => {
  it("replays the first response byte for byte and creates nothing more", async () => {
    const headers = { "idempotency-key": "order-42-customer" };
    const body = { email: "idem@example.com", name: "Idem" };
    const first = await app.call("POST", "/v1/customers", { body, headers });
    expect(first.status).toBe(201);
    const again = await app.call("POST", "/v1/customers", { body, headers });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await app.db.prisma.customer.count({ where: { email: "idem@example.com" } })).toBe(1);
  });

  it("replays an error response too (not a refusal of the input), and refuses the key with another body", async () => {
    const headers = { "idempotency-key": "bad-then-other" };
    const body = { orderId: "idem-missing", amount: "5", customerId: newId("cus") };
    const missing = await app.call("POST", "/v1/charges", { body, headers });
    expect(missing.body).toMatchObject({ code: "resource_missing", param: "customerId" });
    expect((await app.call("POST", "/v1/charges", { body, headers })).text).toBe(missing.text);
    const other = await app.call("POST", "/v1/customers", { body: { email: "other@example.com", name: "O" }, headers });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
    expect(await app.db.prisma.customer.count({ where: { email: "other@example.com" } })).toBe(0);
  });

  it("scopes keys per merchant and mode", async () => {
    const headers = { "idempotency-key": "shared-key" };
    const a = await app.call("POST", "/v1/customers", { body: { email: "k1@example.com", name: "A" }, headers });
    const b = await app.call("POST", "/v1/customers", { key: app.liveKey, body: { email: "k1@example.com", name: "A" }, headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it("answers 409 idempotency_key_in_use while the first request is running", async () => {
    const scope = { merchantId: app.merchant.merchant.id, livemode: false };
    await app.db.prisma.idempotencyRecord.create({ data: { ...scope, key: "in-flight", requestHash: "x", lockedUntil: new Date(Date.now() + 60_000) } });
    const res = await app.call("POST", "/v1/customers", { body: { email: "flight@example.com", name: "F" }, headers: { "idempotency-key": "in-flight" } });
    // The stored fingerprint differs, so reuse is reported first; with the same request it is "in use".
    expect(res.body.code).toBe("idempotency_key_reused");
    const body = { email: "flight@example.com", name: "F" };
    const first = app.call("POST", "/v1/customers", { body, headers: { "idempotency-key": "race" } });
    const second = app.call("POST", "/v1/customers", { body, headers: { "idempotency-key": "race" } });
    const statuses = (await Promise.all([first, second])).map((r) => r.status).sort();
    // Either the second saw the stored response (201) or the claim (409); never a second customer.
    expect([
      [201, 201],
      [201, 409],
    ]).toContainEqual(statuses);
    expect(await app.db.prisma.customer.count({ where: { email: "flight@example.com" } })).toBe(1);
  });

  it("rejects an over-long key", async () => {
    const res = await app.call("POST", "/v1/customers", { body: { email: "long@example.com", name: "L" }, headers: { "idempotency-key": "k".repeat(256) } });
    expect(res.body).toMatchObject({ code: "parameter_invalid", param: "Idempotency-Key" });
  });
});

describe("concurrency", () => {
  it("50 parallel creates of one email: one 201, 49 409s", async () => {
    const body = { email: "race@example.com", name: "Race" };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => app.call("POST", "/v1/customers", { body: { ...body, email: i % 2 ? body.email : "RACE@example.com" } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.code === "customer_email_exists")).toBe(true);
    expect(await app.db.prisma.customer.count({ where: { emailLower: "race@example.com" } })).toBe(1);
  });
});

describe("rate limits", () => {
  it("answers 429 with Retry-After past the per-key limit, per key", async () => {
    const m = await app.newMerchant();
    const key = m.apiKeys.test.secret;
    for (let i = 0; i < 5; i++) expect((await app.call("GET", "/v1/customers", { key })).status).toBe(200);
    const limited = await app.call("GET", "/v1/customers", { key });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: "rate_limited", statusCode: 429 });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    // Other groups and other keys keep their own budgets.
    expect((await app.call("POST", "/v1/customers", { key, body: { email: "rl@example.com", name: "R" } })).status).toBe(201);
    expect((await app.call("GET", "/v1/customers", { key: m.apiKeys.live.secret })).status).toBe(200);
  });
});

describe("POST /v1/customers/jwt", () => {
  const sign = (claims: Record<string, unknown>, opts: { kid?: string; secret?: string; exp?: number; iat?: number } = {}) => {
    const { id, secret } = app.merchant.jwtSecrets.test;
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: opts.kid ?? id }).setIssuedAt(opts.iat ?? now);
    if (opts.exp !== 0) jwt.setExpirationTime(opts.exp ?? now + 600);
    return jwt.sign(new TextEncoder().encode(opts.secret ?? secret));
  };
  const post = async (token: string, body: unknown = {}) =>
    app.call("POST", "/v1/customers/jwt", { key: null, body, headers: { authorization: `Bearer ${token}` } });

  it("creates the customer (201), then returns it (200)", async () => {
    const token = await sign({ email: "jwt@example.com", name: "Jay", phone: "+49" });
    const created = await post(token, { companyName: "JCo", metadata: { src: "web" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: "jwt@example.com", name: "Jay", phone: "+49", companyName: "JCo", metadata: { src: "web" }, livemode: false });
    const again = await post(await sign({ email: "JWT@example.com" }));
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
    const viaKey = await app.call("GET", `/v1/customers/${created.body.id}`);
    expect(viaKey.body.email).toBe("jwt@example.com");
  });

  it.each([
    ["expired", () => sign({ email: "a@b.co" }, { exp: Math.floor(Date.now() / 1000) - 120, iat: Math.floor(Date.now() / 1000) - 600 })],
    ["wrong key", () => sign({ email: "a@b.co" }, { secret: "not-the-secret" })],
    ["unknown kid", () => sign({ email: "a@b.co" }, { kid: "jwk_test_AAAAAAAAAAAAAAAAAAAAAAAA" })],
    ["malformed kid", () => sign({ email: "a@b.co" }, { kid: "whatever" })],
    ["missing email", () => sign({ name: "No Mail" })],
    ["missing exp", () => sign({ email: "a@b.co" }, { exp: 0 })],
    ["exp more than an hour ahead", () => sign({ email: "a@b.co" }, { exp: Math.floor(Date.now() / 1000) + 7200 })],
    ["not a JWT", async () => "abc.def.ghi"],
  ])("%s → 401 jwt_invalid", async (_label, make) => {
    const before = await app.db.prisma.customer.count();
    const res = await post(await make());
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("jwt_invalid");
    expect(await app.db.prisma.customer.count()).toBe(before);
  });

  it("401 without an Authorization header, 400 for a bad body", async () => {
    expect((await app.call("POST", "/v1/customers/jwt", { key: null, body: {} })).body.code).toBe("jwt_invalid");
    const res = await post(await sign({ email: "body@example.com" }), { email: "other@example.com" });
    expect(res.body).toMatchObject({ code: "parameter_unknown", param: "email" });
  });

  it("a live-mode secret creates a live customer", async () => {
    const { id, secret } = app.merchant.jwtSecrets.live;
    const res = await post(await sign({ email: "live-jwt@example.com" }, { kid: id, secret }));
    expect(res.status).toBe(201);
    expect(res.body.livemode).toBe(true);
    expect((await app.call("GET", `/v1/customers/${res.body.id}`)).status).toBe(404);
  });
});
