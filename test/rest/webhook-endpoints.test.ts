// /v1/webhook_endpoints (.docs/webhooks.md "Webhook endpoints"): the key's merchant and mode only,
// the secret shown only when made, live mode's URL rules, and endpoints made here receiving events.
// URLs are IP literals: saving one resolves its name, and tests send nothing off this machine.
import { pino } from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";
import { startReceiver } from "../helpers/receiver.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const create = (body: unknown, key?: string) => app.call("POST", "/v1/webhook_endpoints", { body, key });

describe("/v1/webhook_endpoints", () => {
  it("creates with 201 and the secret, which no later answer shows", async () => {
    const res = await create({ url: "http://127.0.0.1:9/hooks", events: ["charge.completed", "charge.completed"], description: "orders" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whep_[0-9A-Za-z]{24}$/),
      object: "webhook_endpoint",
      livemode: false,
      url: "http://127.0.0.1:9/hooks",
      events: ["charge.completed"],
      description: "orders",
      status: "enabled",
      secret: expect.stringMatching(/^whsec_/),
      createdAt: expect.any(String),
    });
    const { secret: _, ...shown } = res.body;
    const got = await app.call("GET", `/v1/webhook_endpoints/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(shown);
    const all = await create({ url: "http://127.0.0.1:9/any" });
    expect(all.body).toMatchObject({ events: [], description: null });
  });

  it("lists newest first in pages, only the key's merchant and mode", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.unshift((await create({ url: `http://127.0.0.1:9/h${i}` }, key)).body.id);
    await create({ url: "http://127.0.0.1:9/live" }, merchant.apiKeys.live.secret);
    const first = await app.call("GET", "/v1/webhook_endpoints?limit=2", { key });
    expect(first.body).toMatchObject({ object: "list", hasMore: true });
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data[0].secret).toBeUndefined();
    const next = await app.call("GET", `/v1/webhook_endpoints?limit=2&startingAfter=${ids[1]}`, { key });
    expect(next.body).toMatchObject({ hasMore: false, data: [{ id: ids[2] }] });
    // Another merchant's or mode's endpoint does not exist for this key.
    for (const other of [app.testKey, merchant.apiKeys.live.secret]) {
      expectError(await app.call("GET", `/v1/webhook_endpoints/${ids[0]}`, { key: other }), 404, "resource_missing", "id");
      expectError(await app.call("DELETE", `/v1/webhook_endpoints/${ids[0]}`, { key: other }), 404, "resource_missing", "id");
    }
  });

  it("updates url, events, description and status; disabling and enabling are the status", async () => {
    const { id } = (await create({ url: "http://127.0.0.1:9/a" })).body;
    const res = await app.call("PATCH", `/v1/webhook_endpoints/${id}`, {
      body: { url: "http://127.0.0.1:9/b", events: ["customer.created"], description: null, status: "disabled" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ url: "http://127.0.0.1:9/b", events: ["customer.created"], description: null, status: "disabled" });
    expect((await app.call("PATCH", `/v1/webhook_endpoints/${id}`, { body: { status: "enabled" } })).body.status).toBe("enabled");
  });

  it("refuses bad input with the param named, and changes nothing", async () => {
    const { id } = (await create({ url: "http://127.0.0.1:9/keep" })).body;
    expectError(await create({ url: "http://127.0.0.1:9/x", events: ["charge.exploded"] }), 400, "parameter_invalid", "events[0]");
    expectError(await create({ url: "http://127.0.0.1:9/x", secret: "mine" }), 400, "parameter_unknown", "secret");
    expectError(await create({}), 400, "parameter_missing", "url");
    expectError(await create({ url: "ftp://shop.example/x" }), 400, "parameter_invalid", "url");
    expectError(await app.call("PATCH", `/v1/webhook_endpoints/${id}`, { body: { status: "paused" } }), 400, "parameter_invalid", "status");
    expectError(await app.call("POST", `/v1/webhook_endpoints/${id}/rotate_secret`, { body: { overlapHours: 169 } }), 400, "parameter_invalid", "overlapHours");
    expect((await app.call("GET", `/v1/webhook_endpoints/${id}`)).body).toMatchObject({ url: "http://127.0.0.1:9/keep", status: "enabled" });
  });

  it("in live mode takes only https to a public address", async () => {
    for (const url of ["http://93.184.215.14/x", "https://127.0.0.1/x", "https://10.1.2.3/x", "https://[::1]/x", "https://169.254.169.254/latest"]) {
      expectError(await create({ url }, app.liveKey), 400, "parameter_invalid", "url");
    }
    const { id } = (await create({ url: "https://93.184.215.14/hooks" }, app.liveKey)).body;
    expectError(
      await app.call("PATCH", `/v1/webhook_endpoints/${id}`, { key: app.liveKey, body: { url: "https://192.168.0.1/x" } }),
      400,
      "parameter_invalid",
      "url",
    );
  });

  it("rotates the secret (shown once) and deletes", async () => {
    const made = (await create({ url: "http://127.0.0.1:9/r" })).body;
    const rotated = await app.call("POST", `/v1/webhook_endpoints/${made.id}/rotate_secret`, { body: { overlapHours: 0 } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(made.secret);
    const deleted = await app.call("DELETE", `/v1/webhook_endpoints/${made.id}`);
    expect(deleted.body).toEqual({ id: made.id, object: "webhook_endpoint", deleted: true });
    expectError(await app.call("GET", `/v1/webhook_endpoints/${made.id}`), 404, "resource_missing", "id");
  });

  it("an endpoint made over the API receives the merchant's events, signed with its secret", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const receiver = await startReceiver();
    const { secret } = (await create({ url: receiver.url, events: ["customer.created"] }, key)).body;
    const dispatcher = startWebhookDispatcher(app.db.prisma, pino({ level: "silent" }), { intervalMs: 20 });
    try {
      await app.call("POST", "/v1/customers", { key, body: { email: "hooked@example.com", name: "Hooked" } });
      const [got] = await receiver.waitForCount(1);
      expect((new Webhook(secret).verify(got!.body, got!.headers) as { type: string }).type).toBe("customer.created");
      // The endpoint wants customer.created only.
      await app.call("PATCH", `/v1/customers/${JSON.parse(got!.body).data.id}`, { key, body: { name: "Hooked again" } });
      // A later customer.created arrives alone: the dispatcher had its chance to send the update and did not.
      await app.call("POST", "/v1/customers", { key, body: { email: "hooked-too@example.com", name: "Hooked too" } });
      const all = await receiver.waitForCount(2);
      expect(all.map((r) => JSON.parse(r.body).type)).toEqual(["customer.created", "customer.created"]);
      expect(JSON.parse(all[1]!.body).data.email).toBe("hooked-too@example.com");
    } finally {
      await dispatcher.stop();
      await receiver.close();
    }
  });
});
