// `npm run bench`: the service against a raw node:http + pg baseline on the same PostgreSQL, in the
// same run, for GET and POST of /v1/customers and /v1/charges. Prints one JSON line with
// requests/s, p50/p99 latency and the service/baseline throughput ratio.
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { createBenchMerchant, freePort, serviceEnv, waitReady } from "./service.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
// BENCH_ONLY: some of the cases, e.g. "getCustomer,getCharge"; BENCH_SERVICE_NODE_ARGS: e.g.
// "--cpu-prof --cpu-prof-dir=prof" to profile the service.
const ONLY = process.env.BENCH_ONLY?.split(",");
const NODE_ARGS = process.env.BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean) ?? [];

const database = await throwawayDatabase("api");
const env = serviceEnv(database.url);
const children = [];

try {
  const { key, merchantId } = createBenchMerchant(env);

  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_ARGS, "dist/main.js"], { env: { ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
  children.push(child);
  const service = `http://127.0.0.1:${port}`;
  await waitReady(`${service}/readyz`);
  const baseline = await new Promise((resolve) => {
    const child = fork("test/bench/baseline.mjs", { env: { ...env, MERCHANT_ID: merchantId } });
    children.push(child);
    child.on("message", (m) => resolve(`http://127.0.0.1:${m.port}`));
  });

  const headers = { "x-api-key": key, "content-type": "application/json" };
  const customer = await (
    await fetch(`${service}/v1/customers`, { method: "POST", headers, body: JSON.stringify({ email: "bench@example.com", name: "Bench" }) })
  ).json();

  const load = (target, opts) =>
    new Promise((resolve, reject) =>
      autocannon({ url: target, connections: CONNECTIONS, duration: DURATION, headers, ...opts }, (err, r) => {
        if (err) return reject(err);
        if (r.non2xx > 0 || r.errors > 0) return reject(new Error(`${target}: ${r.non2xx} non-2xx, ${r.errors} errors`));
        resolve({ rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99 });
      }),
    );
  let n = 0;
  const postOpts = (body) => () => ({ method: "POST", requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(body(n++)) }) }] });
  const tag = () => randomBytes(3).toString("hex");
  const charge = await (await fetch(`${service}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "bench", amount: "25" }) })).json();

  // Warm both (JIT, pools, auth cache) before measuring.
  await load(`${service}/v1/customers/${customer.id}`, { duration: 2 });
  await load(`${baseline}/v1/customers/${customer.id}`, { duration: 2 });

  const result = {};
  for (const [name, path, opts] of [
    ["getCustomer", `/v1/customers/${customer.id}`, () => ({})],
    ["createCustomer", "/v1/customers", postOpts((i) => ({ email: `b${i}-${tag()}@example.com`, name: "Bench" }))],
    ["getCharge", `/v1/charges/${charge.id}`, () => ({})],
    ["createCharge", "/v1/charges", postOpts((i) => ({ orderId: `o${i}-${tag()}`, amount: "25.50" }))],
  ]) {
    if (ONLY && !ONLY.includes(name)) continue;
    const s = await load(service + path, opts());
    const b = await load(baseline + path, opts());
    result[name] = { service: s, baseline: b, ratio: Number((s.rps / b.rps).toFixed(2)) };
  }
  console.log(JSON.stringify({ bench: "api", connections: CONNECTIONS, seconds: DURATION, ...result }));
} finally {
  for (const c of children) c.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  await database.drop();
}
