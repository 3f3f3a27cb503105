// Live updates across processes through Redis: two API instances and a worker's publisher sharing
// one Redis, and a Redis that goes away and comes back. These need a Redis server, so they run in
// the PostgreSQL + Redis pass of .ci/run (REDIS_URL set); the Redis restart test starts its own.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { connect, createServer } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { loadConfig } from "../../src/config.js";
import { openRealtime, type Realtime } from "../../src/realtime/index.js";
import { SETTINGS, startApp, startSecondInstance, type TestApp } from "../helpers/harness.js";
import { resyncBehind, sseSubscribe, subscribe, subscribed, wsClient } from "../helpers/live.js";
import { until } from "../helpers/wait.js";

const CHARGE_UPDATED = `subscription($id: ID!) { chargeUpdated(id: $id) { id status } }`;
const CHARGE_EVENTS = `subscription { chargeEvents { id type data } }`;
const EVENTS = `subscription { events { id type data } }`;

const newCharge = async (app: TestApp, orderId: string) => {
  const res = await app.call("POST", "/v1/charges", { body: { orderId, amount: "5.00", expiresInMinutes: 5 } });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

describe.runIf(process.env.REDIS_URL)("two API instances and a worker sharing Redis", () => {
  let a: TestApp;
  let b: Awaited<ReturnType<typeof startSecondInstance>>;
  let worker: Realtime;
  beforeAll(async () => {
    a = await startApp();
    b = await startSecondInstance(a);
    const config = loadConfig({ NODE_ENV: "test", REDIS_URL: process.env.REDIS_URL });
    worker = openRealtime(config, pino({ level: "silent" }), { subscribe: false });
  });
  afterAll(async () => {
    await worker?.pubsub.close();
    await b?.stop();
    await a?.stop();
  });

  it("a change through instance A or the worker reaches subscribers on instance B, in order, exactly once", async () => {
    const watched = await newCharge(a, "two-watched");
    await subscribed(b.pubsub, 0);
    const client = wsClient(b.url, a.testKey);
    const updates = subscribe(client, CHARGE_UPDATED, { id: watched.id });
    const events = subscribe(client, CHARGE_EVENTS);
    const sseUpdates = sseSubscribe(b.url, CHARGE_UPDATED, { id: watched.id }, a.testKey);
    const sseEvents = sseSubscribe(b.url, CHARGE_EVENTS, {}, a.testKey);
    await updates.waitFor(1);
    await sseUpdates.waitFor(1);
    await subscribed(b.pubsub, 4); // the event streams' SUBSCRIBE confirmed by Redis

    const made = [];
    for (let i = 0; i < 6; i++) made.push(await newCharge(a, `two-${i}`));
    for (const c of made.slice(0, 3)) expect((await a.call("DELETE", `/v1/charges/${c.id}`)).status).toBe(200);
    // The worker's expiry sweep (its own Redis publisher) expires the rest, the watched one too.
    const expired = await expireDueCharges(a.db.prisma, { ...SETTINGS, feed: worker.live }, new Date(Date.now() + 3_600_000));
    expect(expired.length).toBe(4);

    const expected = [
      ...made.map((c) => ["charge.pending", c.id]),
      ...made.slice(0, 3).map((c) => ["charge.cancelled", c.id]),
      ...[...expired].map((c) => ["charge.expired", c.id]),
    ];
    // Then one more charge through A, once all of the above arrived: whatever else a stream was to get
    // (a second copy above all) would have come before its event, so what came before it is all.
    for (const r of [events, sseEvents]) await r.waitFor(expected.length);
    const fence = await newCharge(a, "two-fence");
    expected.push(["charge.pending", fence.id]);
    for (const r of [events, sseEvents]) {
      await r.waitFor(expected.length);
      expect(r.values.map((v) => [v.chargeEvents.type, v.chargeEvents.data.id])).toEqual(expected);
      expect(new Set(r.values.map((v) => v.chargeEvents.id)).size).toBe(expected.length);
    }
    for (const r of [updates, sseUpdates]) {
      await r.waitFor(2);
      expect(r.values.map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "EXPIRED"]);
    }
    sseUpdates.stop();
    sseEvents.stop();
    await client.dispose();
  });
});

const redisServer = spawnSync("sh", ["-c", "command -v redis-server"]).status === 0;

describe.runIf(process.env.REDIS_URL && redisServer)("Redis going away", () => {
  let port: number;
  let redis: ChildProcess | null = null;
  let app: TestApp;

  const startRedis = async () => {
    redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    await waitFor(async () => (await app?.call("GET", "/readyz", { key: null }))?.body?.status === "ok" || !app, 10_000);
  };
  const stopRedis = async () => {
    const r = redis!;
    const exited = new Promise((resolve) => r.once("exit", resolve));
    r.kill("SIGTERM");
    await exited;
    redis = null;
  };

  beforeAll(async () => {
    port = await freePort();
    await startRedis();
    await until("redis-server listening", () => accepts(port));
    app = await startApp({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await app?.stop();
    if (redis) await stopRedis();
  });

  it("keeps the API up (readiness: degraded) and resumes subscriptions when Redis is back, missing nothing", async () => {
    const first = await newCharge(app, "outage-1");
    const client = wsClient(app.url, app.testKey);
    const updates = subscribe(client, CHARGE_UPDATED, { id: first.id });
    const events = subscribe(client, CHARGE_EVENTS);
    const everything = subscribe(client, EVENTS);
    await updates.waitFor(1);
    await subscribed(app.pubsub, 3);

    await stopRedis();
    await waitFor(async () => (await app.call("GET", "/readyz", { key: null })).body.status === "degraded", 10_000);
    const ready = await app.call("GET", "/readyz", { key: null });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: "degraded",
      database: "ok",
      redis: "unreachable",
      email: "not_configured",
      reasons: [expect.stringMatching(/^redis unreachable/)],
    });

    // Requests still work; this cancel's live update cannot be published now.
    expect((await app.call("DELETE", `/v1/charges/${first.id}`)).status).toBe(200);
    const during = await newCharge(app, "outage-2");
    const customer = await app.call("POST", "/v1/customers", { body: { email: "outage@example.com", name: "Outage" } });
    expect(customer.status, customer.text).toBe(201);

    await startRedis();
    // Back: subscribers reload what they follow, so the changes made during the outage arrive.
    await updates.waitFor(2, 15_000);
    expect(updates.values.map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "CANCELLED"]);
    await events.waitFor(2, 15_000);

    const after = await newCharge(app, "outage-3");
    await events.waitFor(3, 10_000);
    // Fences, behind all of the above: a change to the followed charge (a customer attached, seen on a
    // reload every subscriber is told to make), then one more charge. Whatever else a stream was to
    // get (a second copy above all) would have come before them.
    await app.db.prisma.charge.update({ where: { id: first.id }, data: { customerId: customer.body.id } });
    resyncBehind(app.pubsub);
    await updates.waitFor(3, 10_000);
    expect(updates.values.map((v) => v.chargeUpdated.status)).toEqual(["PENDING", "CANCELLED", "CANCELLED"]);
    const fence = await newCharge(app, "outage-fence");
    await events.waitFor(4, 10_000);
    expect(events.values.map((v) => [v.chargeEvents.type, v.chargeEvents.data.id])).toEqual([
      ["charge.cancelled", first.id],
      ["charge.pending", during.id],
      ["charge.pending", after.id],
      ["charge.pending", fence.id],
    ]);
    // Every type is backfilled alike: the customer's event committed during the outage too.
    await everything.waitFor(5, 10_000);
    expect(everything.values.map((v) => [v.events.type, v.events.data.id])).toEqual([
      ["charge.cancelled", first.id],
      ["charge.pending", during.id],
      ["customer.created", customer.body.id],
      ["charge.pending", after.id],
      ["charge.pending", fence.id],
    ]);
    await client.dispose();
  });
});

async function waitFor(test: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await test().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
    socket.once("close", () => socket.destroy());
    socket.once("connect", () => socket.end());
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
