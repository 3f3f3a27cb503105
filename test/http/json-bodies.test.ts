// How a JSON body is read (.docs/api.md "Types"): an empty body is no body whatever its Content-Type
// (legacy clients send `Content-Type: application/json` on a bodyless DELETE), bytes that are not
// UTF-8 are refused rather than stored as U+FFFD, and a body that is not a JSON object says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerCount, expectError, startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const JSON_TYPE = { "content-type": "application/json" };

describe("a bodyless request with Content-Type: application/json", () => {
  it("cancels a charge with DELETE", async () => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "bodyless-delete", amount: "25" } })).body;
    const res = await app.call("DELETE", `/v1/charges/${charge.id}`, { headers: JSON_TYPE });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: charge.id, status: "CANCELLED" });
  });

  it("deletes a customer with DELETE, and reads with GET", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "bodyless@example.com", name: "Bodyless" } })).body;
    const read = await app.call("GET", `/v1/customers/${customer.id}`, { headers: JSON_TYPE });
    expect(read.status).toBe(200);
    const deleted = await app.call("DELETE", `/v1/customers/${customer.id}`, { headers: { ...JSON_TYPE, "idempotency-key": "bodyless-delete" } });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: customer.id, object: "customer", deleted: true });
  });

  it("names the first missing field on a route that needs a body, as without the header", async () => {
    const withHeader = await app.call("POST", "/v1/customers", { raw: "", headers: JSON_TYPE });
    expectError(withHeader, 400, "parameter_missing", "email");
    const without = await app.call("POST", "/v1/customers", {});
    expect(without.body.message).toBe(withHeader.body.message);
  });
});

describe("a bodyless request with another Content-Type", () => {
  it.each(["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"])("%s: a DELETE cancels the charge", async (type) => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `bodyless-${type}`, amount: "25" } })).body;
    const res = await app.call("DELETE", `/v1/charges/${charge.id}`, { headers: { "content-type": type } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: charge.id, status: "CANCELLED" });
  });

  it("with a body is still refused: bodies are JSON", async () => {
    const before = await customerCount(app);
    const res = await app.call("POST", "/v1/customers", {
      raw: "email=form%40example.com&name=Form",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectError(res, 400, "body_invalid_json", null);
    expect(res.body.message).toBe("Request bodies must be JSON sent with 'Content-Type: application/json'");
    expect(await customerCount(app)).toBe(before);
  });
});

describe("bytes that are not UTF-8", () => {
  it("are 400 body_invalid_json, and nothing is stored", async () => {
    const before = await customerCount(app);
    const body = Buffer.concat([Buffer.from('{"email":"latin1@example.com","name":"Ren'), Buffer.from([0xe9]), Buffer.from('e"}')]);
    const res = await fetch(`${app.url}/v1/customers`, { method: "POST", headers: { ...JSON_TYPE, "x-api-key": app.testKey }, body });
    const answer = { status: res.status, headers: res.headers, body: await res.json() };
    expectError(answer, 400, "body_invalid_json", null);
    expect(answer.body.message).toMatch(/not valid UTF-8/);
    expect(await customerCount(app)).toBe(before);
  });

  it("leave valid UTF-8 (accents, emoji) as sent", async () => {
    const res = await app.call("POST", "/v1/customers", { body: { email: "utf8@example.com", name: "Renée 🎉" } });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe("Renée 🎉");
  });
});

describe("a body that is not a JSON object", () => {
  it.each([
    ["null", "null", "null"],
    ["an array", '[{"email":"a@b.co","name":"A"}]', "an array"],
    ["a string", '"a@b.co"', "a string"],
    ["a number", "42", "a number"],
    ["a boolean", "true", "a boolean"],
  ])("%s is 400 body_invalid_json saying the body must be an object", async (_label, raw, received) => {
    const res = await app.call("POST", "/v1/customers", { raw, headers: JSON_TYPE });
    expectError(res, 400, "body_invalid_json", null);
    expect(res.body.message).toBe(`The request body must be a JSON object such as {"name": "value"}; received ${received}`);
  });

  it("is refused on a PATCH too, not read as an empty change", async () => {
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "patch-null@example.com", name: "Patch" } })).body;
    expectError(await app.call("PATCH", `/v1/customers/${customer.id}`, { raw: "null", headers: JSON_TYPE }), 400, "body_invalid_json", null);
  });
});
