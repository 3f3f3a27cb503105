// `npm run build && node test/bench/webhooks.mjs`: the webhook dispatcher on a throwaway PostgreSQL
// database, delivering to a local receiver. Prints one JSON line (progress on stderr):
// - throughput: deliveries per second for a burst of events to 100 endpoints at once (goal ≥ 500),
//   next to a baseline in the same run: the same number of signed POSTs sent straight from node:http
//   with the same concurrency, no database (the ratio is what the outbox costs);
// - latency: p50/p99 from the commit of a change to the receiver having its webhook, for a steady
//   20 events/s to one endpoint (goal p50 < 100 ms): the dispatcher in the committing process
//   (`latency`, as `npm start` runs), and in a worker of its own (its own database pool) hearing the
//   commits through Redis (`latencyAcrossProcesses`, REDIS_URL, default the local one) or only by
//   its 50 ms poll (`latencyAcrossProcessesWithoutRedis`).
import { createServer, Agent, request } from "node:http";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { openDatabase } from "../../dist/db/client.js";
import { migrate } from "../../dist/db/migrate.js";
import { recordEvents } from "../../dist/domain/events.js";
import { createMerchant } from "../../dist/domain/merchants.js";
import { OPERATOR_ACTOR } from "../../dist/domain/security-events.js";
import { createWebhookEndpoint } from "../../dist/domain/webhook-endpoints.js";
import { startWebhookDispatcher } from "../../dist/jobs/webhook-dispatcher.js";
import { loadConfig } from "../../dist/config.js";
import { onWebhooksDue, ringWebhooksOnCommit } from "../../dist/realtime/doorbell.js";
import { openRealtime } from "../../dist/realtime/index.js";
import { webhookHeaders } from "../../dist/webhooks/signature.js";
import { throwawayDatabase } from "./throwaway-db.mjs";

const ENDPOINTS = 100;
const BURST_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 100); // × 100 endpoints
const STEADY_EVENTS = 200;
const log = (...a) => console.error("[webhooks]", ...a);

const database = await throwawayDatabase("hooks");

// One receiver process-local server; each endpoint has its own path.
const arrivals = [];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    arrivals.push({ id: req.headers["webhook-id"], at: performance.now() });
    res.writeHead(204).end();
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${server.address().port}`;

const db = await openDatabase({ url: database.url, poolSize: 20 });
const REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const result = {};
try {
  await migrate(db);
  const { prisma } = db;
  const fanout = await createMerchant(prisma, { name: "Fan-out" }, { feeBps: 100 });
  for (let i = 0; i < ENDPOINTS; i++)
    await createWebhookEndpoint(prisma, { merchantId: fanout.merchant.id, livemode: false }, { url: `${receiverUrl}/e${i}`, events: [] }, OPERATOR_ACTOR);
  const single = await createMerchant(prisma, { name: "Steady" }, { feeBps: 100 });
  await createWebhookEndpoint(prisma, { merchantId: single.merchant.id, livemode: false }, { url: `${receiverUrl}/steady`, events: [] }, OPERATOR_ACTOR);
  const event = (merchantId, i) => ({
    scope: { merchantId, livemode: false },
    type: "customer.updated",
    data: { id: `cus_${i}`, object: "customer", name: "Bench" },
  });

  // Baseline: the same signed POSTs from node:http, 100 at a time.
  const total = BURST_EVENTS * ENDPOINTS;
  const body = JSON.stringify({ id: "evt_x", type: "customer.updated", timestamp: new Date().toISOString(), livemode: false, data: event("m", 0).data });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      while (next < total) {
        const i = next++;
        const headers = { ...webhookHeaders(`evt_${i}`, Math.floor(Date.now() / 1000), body, [secret]), "content-type": "application/json" };
        await new Promise((resolve, reject) => {
          const req = request(`${receiverUrl}/e${i % ENDPOINTS}`, { method: "POST", agent, headers }, (res) => res.resume().on("end", resolve));
          req.on("error", reject);
          req.end(body);
        });
      }
    }),
  );
  const baselinePerSecond = Math.round(total / ((performance.now() - t0) / 1000));
  arrivals.length = 0;
  log(`baseline: ${baselinePerSecond} POSTs/s`);

  // Throughput: the burst is committed first, then one dispatcher drains it.
  await prisma.$transaction((tx) =>
    recordEvents(
      tx,
      Array.from({ length: BURST_EVENTS }, (_, i) => event(fanout.merchant.id, i)),
    ),
  );
  const logger = pino({ level: "warn" });
  const t1 = performance.now();
  let dispatcher = startWebhookDispatcher(prisma, logger);
  while (arrivals.length < total) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - t1) / 1000;
  // Recorded too, not only received.
  while ((await prisma.webhookDelivery.count({ where: { status: "SUCCEEDED" } })) < total) await new Promise((r) => setTimeout(r, 20));
  const recordedSeconds = (performance.now() - t1) / 1000;
  await dispatcher.stop();
  result.throughput = {
    endpoints: ENDPOINTS,
    deliveries: total,
    perSecond: Math.round(total / seconds),
    perSecondRecorded: Math.round(total / recordedSeconds),
    baselinePerSecond,
    ratio: Number((total / seconds / baselinePerSecond).toFixed(2)),
  };
  log(result.throughput);

  /** Steady 20 events/s, each its own committed change, to one endpoint, sent by `start()`'s dispatcher. */
  const steady = async (start) => {
    arrivals.length = 0;
    const d = await start();
    const committed = new Map();
    for (let i = 0; i < STEADY_EVENTS; i++) {
      const [{ id }] = await prisma.$transaction((tx) => recordEvents(tx, [event(single.merchant.id, i)]));
      committed.set(id, performance.now());
      await new Promise((r) => setTimeout(r, 50));
    }
    while (arrivals.length < STEADY_EVENTS) await new Promise((r) => setTimeout(r, 20));
    await d.stop();
    const latencies = arrivals.map((a) => a.at - committed.get(a.id)).sort((a, b) => a - b);
    const pct = (p) => Number(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1));
    return { events: STEADY_EVENTS, ratePerSecond: 20, p50Ms: pct(50), p99Ms: pct(99), maxMs: pct(100) };
  };
  result.latency = await steady(() => startWebhookDispatcher(prisma, logger));
  log(result.latency);

  // A worker of its own: its database pool (this process's commits never reach its announcer).
  const workerDb = await openDatabase({ url: database.url, poolSize: 10 });
  try {
    result.latencyAcrossProcessesWithoutRedis = await steady(() => startWebhookDispatcher(workerDb.prisma, logger));
    log(result.latencyAcrossProcessesWithoutRedis);
    const config = loadConfig({ NODE_ENV: "test", REDIS_URL: REDIS });
    const [api, worker] = [openRealtime(config, logger, { subscribe: true }), openRealtime(config, logger, { subscribe: true })];
    const ringing = ringWebhooksOnCommit(prisma, api.pubsub);
    try {
      result.latencyAcrossProcesses = await steady(async () => {
        const d = startWebhookDispatcher(workerDb.prisma, logger, { doorbell: (ring) => onWebhooksDue(worker.pubsub, ring) });
        await worker.pubsub.confirmed();
        return d;
      });
      log(result.latencyAcrossProcesses);
    } finally {
      ringing.stop();
      await Promise.all([api.pubsub.close(), worker.pubsub.close()]);
    }
  } finally {
    await workerDb.close();
  }
} finally {
  await db.close();
  server.close();
  await database.drop();
}
console.log(JSON.stringify({ bench: "webhooks", ...result }));
