// The `events` subscription: every event type of the key's merchant and mode as it is committed
// (customers, invoices, charges alike), filtered by `types`; other merchants' and modes' never.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, subscribed, wsClient } from "../helpers/live.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const EVENTS = `subscription($types: [String!]) { events(types: $types) { id type livemode timestamp data } }`;

it("streams every committed event of the key's merchant and mode, and only those", async () => {
  const other = await app.newMerchant();
  await subscribed(app.pubsub, 0);
  const clients = [wsClient(app.url, app.testKey), wsClient(app.url, app.liveKey), wsClient(app.url, other.apiKeys.test.secret)];
  const [all, live, otherMerchant] = clients.map((c) => subscribe(c, EVENTS));
  const customersOnly = subscribe(clients[0]!, EVENTS, { types: ["customer.created", "customer.updated"] });
  await subscribed(app.pubsub, 4);

  const customer = await app.call("POST", "/v1/customers", { body: { email: "ada@example.com", name: "Ada" } });
  expect(customer.status, customer.text).toBe(201);
  const updated = await app.call("PATCH", `/v1/customers/${customer.body.id}`, { body: { name: "Ada L." } });
  expect(updated.status, updated.text).toBe(200);
  const charge = await app.call("POST", "/v1/charges", { body: { orderId: "evt-sub-1", amount: "25.00" } });
  expect(charge.status, charge.text).toBe(201);

  const values = await all!.waitFor(3);
  expect(values.map((v) => [v.events.type, v.events.data.id])).toEqual([
    ["customer.created", customer.body.id],
    ["customer.updated", customer.body.id],
    ["charge.pending", charge.body.id],
  ]);
  // What the stream sends is the stored event, as REST shows it.
  const stored = (await app.call("GET", `/v1/events/${values[1].events.id}`)).body;
  expect(values[1].events).toEqual({ id: stored.id, type: stored.type, livemode: false, timestamp: stored.timestamp, data: stored.data });
  expect((await customersOnly.waitFor(2)).map((v) => v.events.type)).toEqual(["customer.created", "customer.updated"]);

  // One more customer in each scope, sent after everything above: whatever else a stream was to get
  // would have come before it (one publisher, messages in order), so what came before it is all.
  const fence = async (key: string) => {
    const made = await app.call("POST", "/v1/customers", { key, body: { email: "fence@example.com", name: "Fence" } });
    expect(made.status, made.text).toBe(201);
    return made.body.id;
  };
  const fences = { test: await fence(app.testKey), live: await fence(app.liveKey), other: await fence(other.apiKeys.test.secret) };
  const got = async (r: typeof all, count: number) => (await r!.waitFor(count)).map((v) => [v.events.type, v.events.data.id]);
  expect((await got(all, 4)).slice(3)).toEqual([["customer.created", fences.test]]);
  expect((await got(customersOnly, 3)).slice(2)).toEqual([["customer.created", fences.test]]);
  expect(await got(live, 1)).toEqual([["customer.created", fences.live]]);
  expect(await got(otherMerchant, 1)).toEqual([["customer.created", fences.other]]);
  for (const r of [all!, live!, otherMerchant!, customersOnly]) expect(r.errors).toEqual([]);
  await Promise.all(clients.map((c) => c.dispose()));
});

it("refuses an unknown event type, naming the argument", async () => {
  const client = wsClient(app.url, app.testKey);
  const r = subscribe(client, EVENTS, { types: ["customer.created", "customer.exploded"] });
  await r.ended();
  const [error] = r.errors[0] as { message: string; extensions: { code: string; param: string } }[];
  expect(error!.extensions.code).toBe("parameter_invalid");
  expect(error!.message).toMatch(/types.*must be an event type/);
  await client.dispose();
});
