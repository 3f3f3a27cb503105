// `npm run build && node test/bench/abuse.mjs`: one API process under a flood from callers without a
// key, on loopback, bounded in time (it stops by itself). Behind a proxy (TRUST_PROXY) a botnet of
// ADDRESSES addresses opens SUBSCRIPTIONS anonymous hosted-page subscriptions (graphql-ws, 10 per
// socket) on a few charges, and sends RATE anonymous requests per second (the public charge view,
// the hosted page, anonymous GraphQL) for SECONDS seconds, while a merchant's backend calls its
// keyed API at a steady pace. Prints one JSON line: what was accepted and refused, the process's
// memory and event-loop delay (from /metrics) before, during and after, and the merchant's latency
// (goal: p99 under 50 ms during the flood).
import { fork, spawn } from "node:child_process";
import http from "node:http";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { createBenchMerchant, freePort, serviceEnv, waitReady } from "./service.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";
import { percentile } from "./kit.mjs";

const SECONDS = Number(process.env.BENCH_ABUSE_SECONDS ?? 30);
const RATE = Number(process.env.BENCH_ABUSE_RATE ?? 1000);
const SUBSCRIPTIONS = Number(process.env.BENCH_ABUSE_SUBSCRIPTIONS ?? 3000);
const ADDRESSES = 100;
const CHARGES = 20;
const PER_SOCKET = 10;
const MERCHANT_RATE = 20;
const METRICS_TOKEN = "bench-metrics-token-0123456789";
const started = Date.now();
const log = (...a) => console.error(`[abuse-bench ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const botAddress = (i) => `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`; // RFC 2544 benchmarking range

const database = await throwawayDatabase("abuse");
const env = serviceEnv(database.url, { TRUST_PROXY: "true", METRICS_TOKEN, RUN_WORKER: "false", DEVNET: "false" });
let child;
const sockets = [];
const cleanup = [];
// The run ends itself whatever happens.
const watchdog = setTimeout(
  () => {
    log("watchdog: past the deadline, exiting");
    child?.kill("SIGKILL");
    process.exit(2);
  },
  (SECONDS + 120) * 1000,
);
watchdog.unref();

try {
  const { key } = createBenchMerchant(env);
  const port = await freePort();
  // BENCH_SERVICE_NODE_ARGS: e.g. "--cpu-prof --cpu-prof-dir=prof" to profile the service under the flood.
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  child = spawn(process.execPath, [...nodeArgs, "dist/main.js"], { env: { ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
  const service = `http://127.0.0.1:${port}`;
  await waitReady(`${service}/readyz`);
  const keyed = { "x-api-key": key, "content-type": "application/json" };
  const charges = [];
  for (let i = 0; i < CHARGES; i++) {
    const res = await fetch(`${service}/v1/charges`, { method: "POST", headers: keyed, body: JSON.stringify({ orderId: `abuse-${i}`, amount: "5" }) });
    charges.push((await res.json()).id);
  }

  const processHealth = async () => {
    const text = await (await fetch(`${service}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const value = (re) => Number(re.exec(text)?.[1] ?? NaN);
    return {
      rssMb: Math.round(value(/^process_resident_memory_bytes (\S+)$/m) / 1e6),
      heapMb: Math.round(value(/^stablegate_process_heap_used_bytes (\S+)$/m) / 1e6),
      loopDelayP99Ms: Math.round(value(/^stablegate_event_loop_delay_seconds\{quantile="0.99"\} (\S+)$/m) * 1e4) / 10,
      loopDelayMaxMs: Math.round(value(/^stablegate_event_loop_delay_seconds\{quantile="1"\} (\S+)$/m) * 1e4) / 10,
    };
  };

  /** The merchant's backend (its own process): keyed reads at a steady pace for `ms`; their latencies. */
  const merchantProcess = fork("test/bench/abuse-merchant.mjs");
  const merchant = (ms) =>
    new Promise((resolve) => {
      merchantProcess.once("message", resolve);
      merchantProcess.send({ service, key, charges, ms, rate: MERCHANT_RATE });
    });
  cleanup.push(() => merchantProcess.kill());

  await processHealth(); // starts the delay window
  const before = { merchant: await merchant(5_000), process: await processHealth() };
  log("before:", JSON.stringify(before));

  // ---- the flood: subscriptions ---------------------------------------------------------------
  const subs = { accepted: 0, refused: {}, socketsRefused: 0 };
  const query = "subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { status } }";
  const WS = (headers) =>
    class extends WebSocket {
      constructor(url, protocols) {
        super(url, protocols, { headers });
      }
    };
  const openSubscriptions = async () => {
    const socketsWanted = Math.ceil(SUBSCRIPTIONS / PER_SOCKET);
    for (let s = 0; s < socketsWanted; s++) {
      const address = botAddress(s % ADDRESSES);
      let closedWith = null;
      const client = createClient({
        url: `${service.replace("http", "ws")}/graphql`,
        webSocketImpl: WS({ "x-forwarded-for": address }),
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => {},
        on: { closed: (e) => (closedWith = e.code) },
      });
      sockets.push(client);
      for (let k = 0; k < PER_SOCKET && s * PER_SOCKET + k < SUBSCRIPTIONS; k++) {
        const id = charges[(s * PER_SOCKET + k) % CHARGES];
        client.subscribe(
          { query, variables: { id } },
          {
            next: (r) => {
              if (r.errors) {
                const code = r.errors[0]?.extensions?.code ?? "error";
                subs.refused[code] = (subs.refused[code] ?? 0) + 1;
              } else if (!r.counted) {
                r.counted = true;
                subs.accepted++;
              }
            },
            error: (e) => {
              const code = Array.isArray(e) ? (e[0]?.extensions?.code ?? "error") : `closed ${closedWith ?? e?.code ?? "?"}`;
              subs.refused[code] = (subs.refused[code] ?? 0) + 1;
            },
            complete: () => {},
          },
        );
      }
      if (s % 20 === 19) await sleep(10);
    }
  };

  // ---- the flood: requests --------------------------------------------------------------------
  const reqs = { sent: 0, byStatus: {}, errors: 0 };
  // node:http on keep-alive sockets, not fetch: the generator shares the machine's cores with the
  // service, and its own cost per request must stay small next to the service's.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const graphqlBody = (id) => JSON.stringify({ query: "query($id: ID!) { paymentSession(chargeId: $id) { status } }", variables: { id } });
  const targets = [(id) => ["GET", `/v1/public/charges/${id}`, null], (id) => ["GET", `/pay/${id}`, null], (id) => ["POST", "/graphql", graphqlBody(id)]];
  const send = (method, path, body, address) =>
    new Promise((resolve, reject) => {
      const headers = { "x-forwarded-for": address };
      if (body) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      const req = http.request(`${service}${path}`, { method, agent, headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      });
      req.on("error", reject);
      req.end(body ?? undefined);
    });
  const flood = async () => {
    const end = Date.now() + SECONDS * 1000;
    const inFlight = new Set();
    let n = 0;
    while (Date.now() < end) {
      const tick = Date.now();
      // Arrivals spread over 10 ms slices, as RATE independent callers would be, not one burst per 100 ms.
      for (let i = 0; i < RATE / 100; i++, n++) {
        const [method, path, body] = targets[n % targets.length](charges[n % CHARGES]);
        const p = send(method, path, body, botAddress(n % ADDRESSES))
          .then((status) => {
            // GraphQL refusals come as 200 with errors; count them apart.
            const key = path === "/graphql" && status === 200 ? "graphql" : String(status);
            reqs.byStatus[key] = (reqs.byStatus[key] ?? 0) + 1;
          })
          .catch(() => reqs.errors++)
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        reqs.sent++;
      }
      await sleep(Math.max(0, 10 - (Date.now() - tick)));
    }
    await Promise.all(inFlight);
  };

  const healthDuring = [];
  const sampler = setInterval(
    () =>
      void processHealth().then(
        (h) => healthDuring.push(h),
        () => {},
      ),
    5_000,
  );
  const [, , merchantDuring] = await Promise.all([openSubscriptions(), flood(), merchant(SECONDS * 1000)]);
  clearInterval(sampler);
  await sleep(1_000);
  log("during:", JSON.stringify({ subs, reqs, merchantDuring }));

  for (const c of sockets) await c.dispose();
  sockets.length = 0;
  await sleep(2_000);
  const after = { merchant: await merchant(5_000), process: await processHealth() };
  const result = {
    bench: "abuse",
    seconds: SECONDS,
    botnetAddresses: ADDRESSES,
    subscriptions: { asked: SUBSCRIPTIONS, ...subs },
    requests: { perSecondAsked: RATE, ...reqs },
    merchant: { before: before.merchant, during: merchantDuring, after: after.merchant },
    process: {
      before: before.process,
      during: {
        rssMbMax: Math.max(...healthDuring.map((h) => h.rssMb)),
        loopDelayP99MsMax: Math.max(...healthDuring.map((h) => h.loopDelayP99Ms)),
        loopDelayMaxMs: Math.max(...healthDuring.map((h) => h.loopDelayMaxMs)),
      },
      after: after.process,
    },
    goal: { merchantP99Ms: 50 },
    met: merchantDuring.p99Ms !== null && merchantDuring.p99Ms < 50,
  };
  console.log(JSON.stringify(result));
} finally {
  for (const stop of cleanup) stop();
  for (const c of sockets) await c.dispose().catch(() => {});
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
  await database.drop();
}
process.exit(0);
