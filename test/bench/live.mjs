// `npm run build && node test/bench/live.mjs`: GraphQL subscriptions under load, on a throwaway
// PostgreSQL database. BENCH_SUBSCRIBERS (default 1,000) WebSocket clients each follow
// `chargeUpdated` of one of 100 charges; then all 100 charges are cancelled at once (a burst of 100
// status changes, 1,000 deliveries). Prints one JSON line (progress on stderr) with, per scenario:
// - commit → delivery p50/p99: from the change's commit (its event's timestamp, taken just before
//   COMMIT) to each subscriber having the update, same clock, millisecond resolution;
// - request → delivery p50/p99: from the cancel request being sent (includes queueing behind the
//   other 99 writes of the burst);
// - memory per idle subscription: growth of the API processes' memory (after a full GC) over the
//   open, idle subscriptions, as V8 heap + buffers and as RSS.
// Scenarios: one API instance (in-process pub/sub); two instances sharing Redis (subscribers split,
// changes made through the first); and the raw baseline in the same run (node:http + ws + pg, a row
// written then a message sent to the topic's sockets; no GraphQL, no pub/sub).
// Goals: p99 < 200 ms at 1,000 subscribers; < 50 KB per idle subscription.
import { spawn } from "node:child_process";
import { createClient } from "graphql-ws";
import pg from "pg";
import WebSocket from "ws";
import { createBenchMerchant, freePort, serviceEnv, waitReady } from "./service.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";
import { percentile } from "./kit.mjs";

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const CHARGES = 100;
const REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const MEASURED = ["--expose-gc", "--require", "./test/bench/gc-hook.cjs"];
const log = (...a) => console.error("[live]", ...a);

const database = await throwawayDatabase("live");
const env = serviceEnv(database.url, { RUN_WORKER: "false", DEVNET: "false", LIVE_CONNECTIONS_PER_KEY: "100000" });
const children = [];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts `args` under the GC hook; `memory()` collects garbage in it and returns its memory use. */
function measuredChild(args, extraEnv, ipc = false) {
  const child = spawn(process.execPath, [...MEASURED, ...args], { env: { ...env, ...extraEnv }, stdio: ["ignore", "ignore", "pipe", ...(ipc ? ["ipc"] : [])] });
  children.push(child);
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
    if (!/BENCH_MEMORY/.test(String(d))) process.stderr.write(d);
  });
  child.memory = async () => {
    const from = err.length;
    child.kill("SIGUSR2");
    for (let i = 0; i < 100; i++) {
      const m = /BENCH_MEMORY (.*)\n/.exec(err.slice(from));
      if (m) return JSON.parse(m[1]);
      await sleep(20);
    }
    throw new Error("no memory report");
  };
  return child;
}

async function startService(extra) {
  const port = await freePort();
  const child = measuredChild(["dist/main.js"], { ...extra, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/readyz`);
  return { url, child };
}

const used = (m) => m.heapUsed + m.external + m.arrayBuffers;
/** Memory growth per subscription over `open()`, after a full GC before and after, in KB (heap + buffers, and RSS). */
async function idleMemory(processes, open) {
  const before = await Promise.all(processes.map((p) => p.memory()));
  const opened = await open();
  await sleep(1000);
  const after = await Promise.all(processes.map((p) => p.memory()));
  const per = (f) => Number(((after.reduce((a, m) => a + f(m), 0) - before.reduce((a, m) => a + f(m), 0)) / 1024 / SUBSCRIBERS).toFixed(1));
  return { opened, heapKb: per(used), rssKb: per((m) => m.rss) };
}

/** Opens one connection per subscriber, each following chargeUpdated of its charge; resolves when all have the first state. */
async function openGraphQLSubscribers(urls, key, charges, onUpdate) {
  const clients = [];
  const ready = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const client = createClient({
      url: `${urls[i % urls.length].replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { "X-API-Key": key },
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => {},
    });
    clients.push(client);
    const id = charges[i % charges.length];
    ready.push(
      new Promise((resolve, reject) => {
        let first = true;
        client.subscribe(
          { query: `subscription($id: ID!) { chargeUpdated(id: $id) { id status } }`, variables: { id } },
          {
            next: (r) => {
              if (r.errors) return reject(new Error(JSON.stringify(r.errors)));
              if (first) return resolve((first = false));
              onUpdate(r.data.chargeUpdated.id);
            },
            error: reject,
            complete: () => {},
          },
        );
      }),
    );
    if (i % 100 === 99) await Promise.all(ready.slice(i - 99)); // open in waves: no thundering herd on connect
  }
  await Promise.all(ready);
  return clients;
}

async function openRawSubscribers(url, topics, onUpdate) {
  const sockets = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const socket = new WebSocket(url.replace("http", "ws"));
    sockets.push(socket);
    await new Promise((resolve, reject) => {
      socket.once("open", () => socket.send(topics[i % topics.length]));
      socket.once("message", () => resolve());
      socket.once("error", reject);
    });
    socket.on("message", (data) => {
      const m = JSON.parse(String(data));
      onUpdate(m.topic, m.committedAt);
    });
  }
  return sockets;
}

/**
 * Sends every change at once; resolves with each delivery's arrival (wall clock, ms) and the
 * request's start, once all `expected` deliveries came.
 */
async function burst(changes, expected, setListener) {
  const sentAt = new Map();
  const arrivals = [];
  let done;
  const all = new Promise((r) => (done = r));
  setListener((id, committedAt) => {
    arrivals.push({ id, at: Date.now(), committedAt });
    if (arrivals.length === expected) done();
  });
  await Promise.all(
    changes.map(async ([id, url, method]) => {
      sentAt.set(id, Date.now());
      const res = await fetch(url, { method, headers: { "x-api-key": KEY } });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status}`);
    }),
  );
  await Promise.race([all, sleep(30_000).then(() => Promise.reject(new Error(`only ${arrivals.length} of ${expected} deliveries`)))]);
  return { arrivals, sentAt };
}

const summary = (arrivals, sentAt, committedAt) => {
  const commit = arrivals.map((a) => a.at - committedAt(a));
  const request = arrivals.map((a) => a.at - sentAt.get(a.id));
  return {
    deliveries: arrivals.length,
    commitToDeliveryMs: { p50: percentile(commit, 50), p99: percentile(commit, 99), max: percentile(commit, 100) },
    requestToDeliveryMs: { p50: percentile(request, 50), p99: percentile(request, 99) },
  };
};

let KEY;
const result = { bench: "live", subscribers: SUBSCRIBERS, changes: CHARGES };
const sql = new pg.Client({ connectionString: database.url });
try {
  KEY = createBenchMerchant(env).key;
  await sql.connect();

  const scenario = async (name, services) => {
    const urls = services.map((s) => s.url);
    const charges = [];
    for (let i = 0; i < CHARGES; i++) {
      const res = await fetch(`${urls[0]}/v1/charges`, {
        method: "POST",
        headers: { "x-api-key": KEY, "content-type": "application/json" },
        body: JSON.stringify({ orderId: `${name}-${i}`, amount: "25.00" }),
      });
      charges.push((await res.json()).id);
    }
    let listener = () => {};
    const memory = await idleMemory(
      services.map((s) => s.child),
      () => openGraphQLSubscribers(urls, KEY, charges, (id) => listener(id)),
    );
    log(name, "subscribers ready; bursting");
    const { arrivals, sentAt } = await burst(
      charges.map((id) => [id, `${urls[0]}/v1/charges/${id}`, "DELETE"]),
      SUBSCRIBERS,
      (fn) => (listener = fn),
    );
    // Each cancel's event was stamped just before its transaction committed.
    const { rows } = await sql.query(`SELECT data->>'id' AS id, created_at FROM events WHERE type = 'charge.cancelled' AND data->>'id' = ANY($1)`, [charges]);
    const committed = new Map(rows.map((r) => [r.id, r.created_at.getTime()]));
    await Promise.all(memory.opened.map((c) => c.dispose()));
    return { ...summary(arrivals, sentAt, (a) => committed.get(a.id)), idleKbPerSubscription: { heap: memory.heapKb, rss: memory.rssKb } };
  };

  const stopAll = async () => {
    for (const c of children.splice(0)) c.kill("SIGTERM");
    await sleep(500);
  };

  result.oneInstance = await scenario("one", [await startService({})]);
  log("one instance", JSON.stringify(result.oneInstance));
  await stopAll();

  result.twoInstancesRedis = await scenario("two", [await startService({ REDIS_URL: REDIS }), await startService({ REDIS_URL: REDIS })]);
  log("two instances", JSON.stringify(result.twoInstancesRedis));
  await stopAll();

  const baselineChild = measuredChild(["test/bench/live-baseline.mjs"], {}, true);
  const baselineUrl = await new Promise((resolve) => baselineChild.on("message", (m) => resolve(`http://127.0.0.1:${m.port}`)));
  const topics = Array.from({ length: CHARGES }, (_, i) => `t${i}`);
  let listener = () => {};
  const memory = await idleMemory([baselineChild], () => openRawSubscribers(baselineUrl, topics, (topic, at) => listener(topic, at)));
  const { arrivals, sentAt } = await burst(
    topics.map((t) => [t, `${baselineUrl}/change/${t}`, "POST"]),
    SUBSCRIBERS,
    (fn) => (listener = fn),
  );
  memory.opened.forEach((s) => s.close());
  result.baseline = { ...summary(arrivals, sentAt, (a) => a.committedAt), idleKbPerSubscription: { heap: memory.heapKb, rss: memory.rssKb } };
  result.ratio = {
    commitToDeliveryP99VsBaseline: Number((result.oneInstance.commitToDeliveryMs.p99 / Math.max(1, result.baseline.commitToDeliveryMs.p99)).toFixed(2)),
    idleHeapVsBaseline: Number((result.oneInstance.idleKbPerSubscription.heap / result.baseline.idleKbPerSubscription.heap).toFixed(2)),
  };
  console.log(JSON.stringify(result));
} finally {
  for (const c of children) c.kill("SIGTERM");
  await sql.end().catch(() => {});
  await sleep(500);
  await database.drop();
}
