// An Idempotency-Key matches a request by its meaning: the same JSON body with its keys in another
// order (at any depth) is the same request and is replayed; a different body is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestFingerprint } from "../../src/rest/idempotency.js";
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
