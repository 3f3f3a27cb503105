// `npm run build && node test/bench/live.mjs`: GraphQL subscriptions under load, on a throwaway
// PostgreSQL database. BENCH_SUBSCRIBERS (default 1,000) WebSocket clients each follow
// `chargeUpdated` of one of 100 charges; then all 100 charges are cancelled at once (a burst of 100
// status changes, 1,000 deliveries). Prints one JSON line (progress on stderr) with, per scenario:
// - latency p50/p99 from the cancel request being sent to each subscriber having the update (an
//   upper bound of commit → delivery: it includes the request and the commit themselves);
// - memory per idle subscription: growth of the API process's RSS over the open, idle subscriptions;
// Scenarios: one API instance (in-process pub/sub); two instances sharing Redis (subscribers split,
// changes made through the first); and the raw baseline in the same run (node:http + ws + pg, a
// row written then a message sent to the topic's sockets; no GraphQL, no pub/sub).
// Goals: p99 < 200 ms at 1,000 subscribers; < 50 KB per idle subscription.
import { execFileSync, fork, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { throwawayDatabase } from "./throwaway-db.mjs";

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const CHARGES = 100;
const REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const log = (...a) => console.error("[live]", ...a);

const database = await throwawayDatabase("live");
const env = {
  ...process.env,
  DATABASE_URL: database.url,
  REDIS_URL: "",
  NODE_ENV: "production",
  LOG_LEVEL: "warn",
  RUN_WORKER: "false",
  DEVNET: "false",
  RATE_LIMIT_CREATE: "1000000",
  RATE_LIMIT_READ: "1000000",
  LIVE_CONNECTIONS_PER_KEY: "100000",
};
const children = [];

const freePort = () =>
  new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))].toFixed(1));
};

async function startService(extra) {
  const port = await freePort();
  const child = spawn(process.execPath, ["dist/main.js"], { env: { ...env, ...extra, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`${url}/readyz`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      return { url, pid: child.pid };
    await sleep(100);
  }
  throw new Error(`${url} never became ready`);
}

/** Opens one connection per subscriber, each following chargeUpdated of its charge; resolves when all have the first state. */
async function openGraphQLSubscribers(urls, key, charges, onUpdate) {
  const clients = [];
  const ready = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const url = urls[i % urls.length];
    const client = createClient({
      url: `${url.replace("http", "ws")}/graphql`,
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
              onUpdate(r.data.chargeUpdated);
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
    socket.on("message", (data) => onUpdate(JSON.parse(String(data))));
  }
  return sockets;
}

/** Fires every change at once and collects each delivery's latency from its request's start. */
async function burst(changeUrls, idOf, deliveriesExpected, subscribe) {
  const sentAt = new Map();
  const latencies = [];
  let done;
  const all = new Promise((r) => (done = r));
  subscribe((update) => {
    latencies.push(performance.now() - sentAt.get(idOf(update)));
    if (latencies.length === deliveriesExpected) done();
  });
  await Promise.all(
    changeUrls.map(async ([id, url, method]) => {
      sentAt.set(id, performance.now());
      const res = await fetch(url, { method, headers: { "x-api-key": KEY } });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status}`);
    }),
  );
  await Promise.race([all, sleep(30_000).then(() => Promise.reject(new Error(`only ${latencies.length} of ${deliveriesExpected} deliveries`)))]);
  return { deliveries: latencies.length, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: percentile(latencies, 100) };
}

let KEY;
const result = { bench: "live", subscribers: SUBSCRIBERS, changes: CHARGES };
try {
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      ["dist/cli/main.js", "merchant", "create", "--name", "Bench", "--test-wallet", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "--json"],
      {
        env,
        encoding: "utf8",
      },
    ),
  );
  KEY = created.apiKeys.test.secret;

  const scenario = async (name, urls) => {
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
    const before = services.map((s) => rssKb(s.pid));
    const clients = await openGraphQLSubscribers(urls, KEY, charges, (u) => listener(u));
    await sleep(2000);
    const after = services.map((s) => rssKb(s.pid));
    const perSubscriptionKb = (after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)) / SUBSCRIBERS;
    log(name, "subscribers ready; bursting");
    const latency = await burst(
      charges.map((id) => [id, `${urls[0]}/v1/charges/${id}`, "DELETE"]),
      (u) => u.id,
      SUBSCRIBERS,
      (fn) => (listener = fn),
    );
    await Promise.all(clients.map((c) => c.dispose()));
    return { ...latency, idleKbPerSubscription: Number(perSubscriptionKb.toFixed(1)) };
  };

  let services = [await startService({})];
  result.oneInstance = await scenario("one", [services[0].url]);
  log("one instance", result.oneInstance);
  children.splice(0).forEach((c) => c.kill("SIGTERM"));
  await sleep(500);

  services = [await startService({ REDIS_URL: REDIS }), await startService({ REDIS_URL: REDIS })];
  result.twoInstancesRedis = await scenario(
    "two",
    services.map((s) => s.url),
  );
  log("two instances", result.twoInstancesRedis);
  children.splice(0).forEach((c) => c.kill("SIGTERM"));

  const baseline = await new Promise((resolve) => {
    const child = fork("test/bench/live-baseline.mjs", { env });
    children.push(child);
    child.on("message", (m) => resolve({ url: `http://127.0.0.1:${m.port}`, pid: child.pid }));
  });
  const topics = Array.from({ length: CHARGES }, (_, i) => `t${i}`);
  let listener = () => {};
  const before = rssKb(baseline.pid);
  const sockets = await openRawSubscribers(baseline.url, topics, (u) => listener(u));
  await sleep(2000);
  const idle = (rssKb(baseline.pid) - before) / SUBSCRIBERS;
  const latency = await burst(
    topics.map((t) => [t, `${baseline.url}/change/${t}`, "POST"]),
    (u) => u.topic,
    SUBSCRIBERS,
    (fn) => (listener = fn),
  );
  sockets.forEach((s) => s.close());
  result.baseline = { ...latency, idleKbPerSubscription: Number(idle.toFixed(1)) };
  result.ratio = {
    p99OneInstanceVsBaseline: Number((result.oneInstance.p99Ms / result.baseline.p99Ms).toFixed(2)),
    idleMemoryVsBaseline: Number((result.oneInstance.idleKbPerSubscription / result.baseline.idleKbPerSubscription).toFixed(2)),
  };
  console.log(JSON.stringify(result));
} finally {
  for (const c of children) c.kill("SIGTERM");
  await sleep(500);
  await database.drop();
}
