// An Idempotency-Key matches a request by its meaning: the same JSON body with its keys in another
// order (at any depth) is the same request and is replayed; a different body is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyStore, requestFingerprint } from "../../src/rest/idempotency.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

describe("Idempotency-Key with a reordered body", () => {
  it("replays the first response for the same body with keys reordered, nested ones too", async () => {
    // Raw text, so the order on the wire is exactly the one written here.
    const headers = { "idempotency-key": "reordered-body", "content-type": "application/json" };
    const first = await app.call("POST", "/v1/customers", {
      raw: '{"email":"order@example.com","name":"Order","address":{"city":"Lyon","country":"FR"},"metadata":{"a":"1","b":2,"c":true}}',
      headers,
    });
    expect(first.status).toBe(201);
    const again = await app.call("POST", "/v1/customers", {
      raw: '{"metadata":{"c":true,"b":2,"a":"1"},"address":{"country":"FR","city":"Lyon"},"name":"Order","email":"order@example.com"}',
      headers,
    });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(await app.db.prisma.customer.count({ where: { email: "order@example.com" } })).toBe(1);
  });

  it("refuses the key with a body that differs in a value", async () => {
    const headers = { "idempotency-key": "reordered-then-changed", "content-type": "application/json" };
    const first = await app.call("POST", "/v1/customers", { raw: '{"email":"changed@example.com","name":"A","metadata":{"a":"1","b":"2"}}', headers });
    expect(first.status).toBe(201);
    const other = await app.call("POST", "/v1/customers", { raw: '{"metadata":{"b":"2","a":"changed"},"name":"A","email":"changed@example.com"}', headers });
    expectError(other, 400, "idempotency_key_reused", "Idempotency-Key");
  });
});

describe("requestFingerprint", () => {
  it("ignores key order at every depth and keeps array order", () => {
    const fp = (body: unknown) => requestFingerprint("POST", "/v1/x", body);
    expect(fp({ a: 1, b: { c: [1, { d: 1, e: 2 }], f: null } })).toBe(fp({ b: { f: null, c: [1, { e: 2, d: 1 }] }, a: 1 }));
    expect(fp({ list: [1, 2] })).not.toBe(fp({ list: [2, 1] }));
    expect(fp({ a: 1 })).not.toBe(fp({ a: "1" }));
    expect(requestFingerprint("POST", "/v1/x", { a: 1 })).not.toBe(requestFingerprint("POST", "/v1/y", { a: 1 }));
  });
});

describe("a request whose input is refused stores nothing under its key", () => {
  const post = (path: string, key: string, body: unknown) => app.call("POST", path, { body, headers: { "idempotency-key": key } });

  it("lets the corrected request run with the same key, then replays it", async () => {
    const key = "order-1001";
    expectError(await post("/v1/customers", key, { email: "not-an-email", name: "A" }), 400, "parameter_invalid", "email");
    expectError(await post("/v1/customers", key, { name: "A" }), 400, "parameter_missing", "email");
    expectError(await post("/v1/customers", key, { email: "fixed@example.com", name: "A", nickname: "x" }), 400, "parameter_unknown", "nickname");
    const fixed = await post("/v1/customers", key, { email: "fixed@example.com", name: "A" });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
    const again = await post("/v1/customers", key, { email: "fixed@example.com", name: "A" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(fixed.text);
    // The key now belongs to the request that ran: another body is still refused.
    expectError(await post("/v1/customers", key, { email: "other@example.com", name: "A" }), 400, "idempotency_key_reused", "Idempotency-Key");
  });

  it("does the same for a body that is not a JSON object", async () => {
    const res = await app.call("POST", "/v1/customers", { raw: "null", headers: { "content-type": "application/json", "idempotency-key": "null-body" } });
    expectError(res, 400, "body_invalid_json", null);
    expect((await post("/v1/customers", "null-body", { email: "after-null@example.com", name: "A" })).status).toBe(201);
  });

  it("does the same when the domain's validation refuses it inside the handler", async () => {
    // The amount is checked by the domain (createCharge), after the key was claimed.
    expectError(await post("/v1/charges", "charge-typed", { orderId: "idem-typed", amount: 25 }), 400, "parameter_invalid", "amount");
    expectError(await post("/v1/charges", "charge-typed", { orderId: "idem-typed", amount: "25.1234567" }), 400, "parameter_invalid", "amount");
    const created = await post("/v1/charges", "charge-typed", { orderId: "idem-typed", amount: "25" });
    expect(created.status).toBe(201);
    expect((await post("/v1/charges", "charge-typed", { orderId: "idem-typed", amount: "25" })).headers.get("idempotent-replayed")).toBe("true");
  });

  it("still stores an answer the endpoint ran to, a conflict included", async () => {
    expect((await post("/v1/customers", "first-taken", { email: "taken@example.com", name: "A" })).status).toBe(201);
    const conflict = await post("/v1/customers", "conflict-key", { email: "taken@example.com", name: "B" });
    expectError(conflict, 409, "customer_email_exists", "email");
    const replayed = await post("/v1/customers", "conflict-key", { email: "taken@example.com", name: "B" });
    expect(replayed.status).toBe(409);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("IdempotencyStore claims", () => {
  it("are ended only by the request holding them, not by one whose claim was taken over", async () => {
    const store = new IdempotencyStore(app.db.prisma);
    const scope = { merchantId: app.merchant.merchant.id, livemode: false };
    const first = await store.claim(scope, "taken-over", "hash");
    if (first.kind !== "run") throw new Error("expected to run");
    // The first holder stalls past its claim; a retry takes the key over.
    await app.db.prisma.idempotencyRecord.updateMany({ where: { key: "taken-over" }, data: { lockedUntil: new Date(Date.now() - 1000) } });
    const second = await store.claim(scope, "taken-over", "hash");
    expect(second.kind).toBe("run");
    // The stalled request ends with refused input: the retry keeps its claim.
    await store.release(scope, first.held);
    await expect(store.claim(scope, "taken-over", "hash")).rejects.toMatchObject({ code: "idempotency_key_in_use" });
    await store.complete(scope, first.held, 201, "{}");
    if (second.kind !== "run") throw new Error("expected to run");
    await store.complete(scope, second.held, 200, '{"ok":true}');
    expect(await store.claim(scope, "taken-over", "hash")).toEqual({ kind: "replay", status: 200, body: '{"ok":true}' });
  });
});
