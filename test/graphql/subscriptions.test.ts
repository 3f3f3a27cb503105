// Live charge status over graphql-ws and SSE, with real clients. Runs in one process with in-process
// pub/sub (npm test) and, when REDIS_URL is set, through Redis.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createApiKey, revokeApiKey } from "../../src/domain/api-keys.js";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { liveChains, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { liveConnections, resyncBehind, sseSubscribe, subscribe, subscribed, wsClient } from "../helpers/live.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ LIVE_SUBSCRIPTIONS_PER_CONNECTION: "3", LIVE_CONNECTIONS_PER_KEY: "4", AUTH_CACHE_TTL_MS: "200" }, { chains: liveChains() });
});
afterAll(() => app?.stop());

const CHARGE_UPDATED = `subscription($id: ID!) { chargeUpdated(id: $id) { id status amount amountReceived livemode customer { id } } }`;
const CHARGE_EVENTS = `subscription($types: [ChargeEventType!]) { chargeEvents(types: $types) { id type livemode timestamp data } }`;
const SESSION = `subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { id status amountRemaining merchantName } }`;

const newCharge = async (orderId: string, key = app.testKey) => {
  const res = await app.call("POST", "/v1/charges", { key, body: { orderId, amount: "25.00" } });
  expect(res.status, res.text).toBe(201);
  return res.body;
};
const codeOf = (errors: unknown[]) => (errors[0] as any[])?.[0]?.extensions?.code;
const keyedConnectionsAre = (count: number) => liveConnections(app.url, "key", count);

describe("chargeUpdated", () => {
  it("sends the current state, then each committed change once, over WebSocket and SSE alike", async () => {
    const charge = await newCharge("live-1");
    const client = wsClient(app.url, app.testKey);
    const ws = subscribe(client, CHARGE_UPDATED, { id: charge.id });
    const sse = sseSubscribe(app.url, CHARGE_UPDATED, { id: charge.id }, app.testKey);
    expect(await sse.status).toBe(200);
    await ws.waitFor(1);
    await sse.waitFor(1);

    expect((await app.call("DELETE", `/v1/charges/${charge.id}`)).status).toBe(200);
    // Cancelling again changes nothing and must send nothing: the next thing each stream sends is a
    // change made behind it (a customer attached, shown on a reload every subscription is told to make).
    expect((await app.call("DELETE", `/v1/charges/${charge.id}`)).status).toBe(200);
    const customer = await app.call("POST", "/v1/customers", { body: { email: "fence@example.com", name: "Fence" } });
    expect(customer.status, customer.text).toBe(201);
    await app.db.prisma.charge.update({ where: { id: charge.id }, data: { customerId: customer.body.id } });
    resyncBehind(app.pubsub);
    for (const r of [ws, sse]) {
      await r.waitFor(3);
      expect(r.values.map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "CANCELLED", "CANCELLED"]);
      expect(r.values[1].chargeUpdated).toEqual({ id: charge.id, status: "CANCELLED", amount: "25.00", amountReceived: null, livemode: false, customer: null });
      expect(r.values[2].chargeUpdated.customer).toEqual({ id: customer.body.id });
      expect(r.errors).toEqual([]);
    }
    ws.stop();
    sse.stop();
    await client.dispose();
  });

  it("follows changes made by the background jobs (expiry) in order", async () => {
    const a = await newCharge("live-exp-a");
    const client = wsClient(app.url, app.testKey);
    const ws = subscribe(client, CHARGE_UPDATED, { id: a.id });
    await ws.waitFor(1);
    // The sweep the worker runs, announcing through the same live feed the service uses.
    await expireDueCharges(app.db.prisma, { ...SETTINGS, feed: app.live }, new Date(Date.now() + 3_600_000));
    await ws.waitFor(2);
    expect(ws.values.map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "EXPIRED"]);
    await client.dispose();
  });

  it("never shows another merchant's or mode's charge, and needs a key", async () => {
    const other = await app.newMerchant();
    const charge = await newCharge("live-tenant");
    const stranger = wsClient(app.url, other.apiKeys.test.secret);
    const liveKey = wsClient(app.url, app.liveKey);
    const anonymous = wsClient(app.url);
    const results = [subscribe(stranger, CHARGE_UPDATED, { id: charge.id }), subscribe(liveKey, CHARGE_UPDATED, { id: charge.id })];
    for (const r of results) {
      await r.ended();
      expect(codeOf(r.errors)).toBe("resource_missing");
      expect(r.values).toEqual([]);
    }
    const anon = subscribe(anonymous, CHARGE_UPDATED, { id: charge.id });
    await anon.ended();
    expect(codeOf(anon.errors)).toBe("api_key_missing");
    await Promise.all([stranger.dispose(), liveKey.dispose(), anonymous.dispose()]);
  });
});

describe("chargeEvents", () => {
  it("streams this merchant's and mode's charge events of the asked types, and nothing else", async () => {
    const other = await app.newMerchant();
    await subscribed(app.pubsub, 0);
    const mine = wsClient(app.url, app.testKey);
    const theirs = wsClient(app.url, other.apiKeys.test.secret);
    const myLive = wsClient(app.url, app.liveKey);
    const all = subscribe(mine, CHARGE_EVENTS);
    const cancelledOnly = subscribe(mine, CHARGE_EVENTS, { types: ["CANCELLED"] });
    const sse = sseSubscribe(app.url, CHARGE_EVENTS, {}, app.testKey);
    const stranger = subscribe(theirs, CHARGE_EVENTS);
    const live = subscribe(myLive, CHARGE_EVENTS);
    expect(await sse.status).toBe(200);
    await subscribed(app.pubsub, 5);

    const one = await newCharge("ev-1");
    const two = await newCharge("ev-2");
    await app.call("DELETE", `/v1/charges/${one.id}`);
    await app.call("POST", "/v1/customers", { body: { email: "ev@example.com", name: "Not a charge event" } });

    // Then one more charge, created and cancelled: whatever else a stream was to get would have come
    // before its events (one publisher, messages in order), so what came before them is all.
    const fence = await newCharge("ev-fence");
    await app.call("DELETE", `/v1/charges/${fence.id}`);
    for (const r of [all, sse]) {
      await r.waitFor(5);
      expect(r.values.map((v) => [v.chargeEvents.type, v.chargeEvents.data.id])).toEqual([
        ["charge.pending", one.id],
        ["charge.pending", two.id],
        ["charge.cancelled", one.id],
        ["charge.pending", fence.id],
        ["charge.cancelled", fence.id],
      ]);
    }
    await cancelledOnly.waitFor(2);
    expect(cancelledOnly.values.map((v) => [v.chargeEvents.type, v.chargeEvents.data.id])).toEqual([
      ["charge.cancelled", one.id],
      ["charge.cancelled", fence.id],
    ]);

    // The pushed event is the stored one.
    const stored = (await app.call("GET", `/v1/events/${all.values[2].chargeEvents.id}`)).body;
    expect(all.values[2].chargeEvents).toEqual({ id: stored.id, type: stored.type, livemode: false, timestamp: stored.timestamp, data: stored.data });

    // Another merchant, and this merchant's live mode, heard nothing of it: the first thing each
    // hears is its own charge's event, made after all of the above.
    const liveCharge = await newCharge("ev-live", app.liveKey);
    const theirCharge = await newCharge("ev-theirs", other.apiKeys.test.secret);
    expect((await live.waitFor(1)).map((v) => [v.chargeEvents.type, v.chargeEvents.data.id, v.chargeEvents.livemode])).toEqual([
      ["charge.pending", liveCharge.id, true],
    ]);
    expect((await stranger.waitFor(1)).map((v) => [v.chargeEvents.type, v.chargeEvents.data.id])).toEqual([["charge.pending", theirCharge.id]]);
    sse.stop();
    await Promise.all([mine.dispose(), theirs.dispose(), myLive.dispose()]);
  });
});

describe("paymentSessionUpdated", () => {
  it("is public: no key needed, limited fields, and follows the charge", async () => {
    const charge = await newCharge("live-session");
    const anonymous = wsClient(app.url);
    const ws = subscribe(anonymous, SESSION, { id: charge.id });
    const sse = sseSubscribe(app.url, SESSION, { id: charge.id });
    await ws.waitFor(1);
    await sse.waitFor(1);
    expect(ws.values[0].paymentSessionUpdated).toEqual({ id: charge.id, status: "PENDING", amountRemaining: "25.00", merchantName: "Test Shop" });
    await app.call("DELETE", `/v1/charges/${charge.id}`);
    for (const r of [ws, sse]) {
      await r.waitFor(2);
      expect(r.values[1].paymentSessionUpdated.status).toBe("CANCELLED");
    }
    const unknown = subscribe(anonymous, SESSION, { id: "chrg_doesnotexist000000000000" });
    await unknown.ended();
    expect(codeOf(unknown.errors)).toBe("resource_missing");
    // Merchant-only fields are not part of the public view.
    const sneaky = subscribe(anonymous, `subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { settlementWallet } }`, { id: charge.id });
    await sneaky.ended();
    expect(sneaky.errors.length).toBe(1);
    sse.stop();
    await anonymous.dispose();
  });
});

describe("connections", () => {
  it("refuses a bad key when the socket opens", async () => {
    const client = wsClient(app.url, "sk_test_wrongwrongwrongwrongwrongwrongwrong");
    const r = subscribe(client, SESSION, { id: "chrg_x" });
    await r.ended();
    expect(client.closes[0]?.code).toBe(4403);
    expect(client.closes[0]?.reason).toMatch(/api_key_invalid/);
  });

  it("limits subscriptions per connection and connections per key", async () => {
    const charge = await newCharge("live-limits");
    await subscribed(app.pubsub, 0);
    await keyedConnectionsAre(0);
    const client = wsClient(app.url, app.testKey);
    const subs = [1, 2, 3].map(() => subscribe(client, CHARGE_UPDATED, { id: charge.id }));
    for (const s of subs) await s.waitFor(1);
    const fourth = subscribe(client, CHARGE_UPDATED, { id: charge.id });
    await fourth.ended();
    expect(codeOf(fourth.errors)).toBe("rate_limited");
    // Ending one frees its slot (the service closed it).
    subs[0]!.stop();
    await subscribed(app.pubsub, 2);
    const again = subscribe(client, CHARGE_UPDATED, { id: charge.id });
    await again.waitFor(1);

    const more = [1, 2, 3].map(() => wsClient(app.url, app.testKey));
    const opened = more.map((c) => subscribe(c, CHARGE_UPDATED, { id: charge.id }));
    for (const s of opened) await s.waitFor(1);
    const fifth = wsClient(app.url, app.testKey);
    const refused = subscribe(fifth, CHARGE_UPDATED, { id: charge.id });
    await refused.ended();
    expect(fifth.closes[0]?.code).toBe(4429);
    // SSE subscriptions count as connections too.
    const sse = sseSubscribe(app.url, CHARGE_UPDATED, { id: charge.id }, app.testKey);
    await sse.ended();
    expect(JSON.stringify(sse.errors)).toMatch(/rate_limited/);
    await Promise.all([client, ...more].map((c) => c.dispose()));
    // Closed connections give their slots back, and so do subscriptions that failed to start:
    // failing SSE subscriptions, SSE streams one after another, then four at once.
    await keyedConnectionsAre(0);
    for (let i = 0; i < 6; i++) {
      const failing = sseSubscribe(app.url, CHARGE_UPDATED, { id: "chrg_doesnotexist000000000000" }, app.testKey);
      await failing.ended();
      expect(JSON.stringify(failing.errors)).toMatch(/resource_missing/);
    }
    for (let i = 0; i < 6; i++) {
      const one = sseSubscribe(app.url, CHARGE_UPDATED, { id: charge.id }, app.testKey);
      await one.waitFor(1);
      one.stop();
      await keyedConnectionsAre(0);
    }
    const four = [1, 2, 3, 4].map(() => sseSubscribe(app.url, CHARGE_UPDATED, { id: charge.id }, app.testKey));
    for (const s of four) await s.waitFor(1);
    four.forEach((s) => s.stop());
  });

  it("closes a revoked key's sockets and SSE streams", async () => {
    const key = await createApiKey(app.db.prisma, app.merchant.merchant.id, false, [], OPERATOR, OPERATOR_ACTOR);
    const charge = await newCharge("live-revoke");
    const client = wsClient(app.url, key.secret);
    const ws = subscribe(client, CHARGE_UPDATED, { id: charge.id });
    const sse = sseSubscribe(app.url, CHARGE_UPDATED, { id: charge.id }, key.secret);
    await ws.waitFor(1);
    await sse.waitFor(1);
    expect(await revokeApiKey(app.db.prisma, key.id, { actor: OPERATOR_ACTOR })).toBe(true);
    await ws.ended(5_000);
    await sse.ended(5_000);
    expect(client.closes[0]).toEqual({ code: 4403, reason: "API key revoked" });
    // Changes after the revocation reach nobody on that key: the service closed both subscriptions.
    await subscribed(app.pubsub, 0);
    await app.call("DELETE", `/v1/charges/${charge.id}`);
    expect(ws.values.length).toBe(1);
    expect(sse.values.length).toBe(1);
  });
});

describe("readiness", () => {
  it("reports the live-update transport", async () => {
    const res = await app.call("GET", "/readyz", { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      process.env.REDIS_URL
        ? { status: "ok", database: "ok", redis: "ok", email: "not_configured" }
        : { status: "ok", database: "ok", email: "not_configured" },
    );
  });
});
