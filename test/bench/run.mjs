// `npm run bench`: the service against a raw node:http + pg baseline on the same PostgreSQL, in the
// same run, for GET and POST of /v1/customers and /v1/charges. Prints one JSON line with
// requests/s, p50/p99 latency and the service/baseline throughput ratio; and each process's CPU per
// request (user + system, from /proc on Linux) with cpuRatio = baseline's / service's: on a shared
// machine whose load moves the throughputs, what each request costs the process moves far less.
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { createBenchMerchant, freePort, serviceEnv, waitReady } from "./service.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
// BENCH_BASELINE_PREPARED=false: a baseline that parses and plans each statement on every call.
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
  const baselineChild = fork("test/bench/baseline.mjs", { env: { ...env, MERCHANT_ID: merchantId } });
  children.push(baselineChild);
  const baseline = await new Promise((resolve) => baselineChild.on("message", (m) => resolve(`http://127.0.0.1:${m.port}`)));

  const headers = { "x-api-key": key, "content-type": "application/json" };
  const customer = await (
    await fetch(`${service}/v1/customers`, { method: "POST", headers, body: JSON.stringify({ email: "bench@example.com", name: "Bench" }) })
  ).json();

  const load = async (target, opts, pid) => {
    const cpuBefore = cpuSeconds(pid);
    const r = await new Promise((resolve, reject) =>
      autocannon({ url: target, connections: CONNECTIONS, duration: DURATION, headers, ...opts }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${target}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    const cpu = cpuBefore === null ? null : cpuSeconds(pid) - cpuBefore;
    return {
      rps: Math.round(r.requests.average),
      p50: r.latency.p50,
      p99: r.latency.p99,
      cpuMicrosPerRequest: cpu === null ? null : Math.round((cpu * 1e6) / r.requests.total),
    };
  };
  let n = 0;
  const postOpts = (body) => () => ({ method: "POST", requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(body(n++)) }) }] });
  const tag = () => randomBytes(3).toString("hex");
  const charge = await (await fetch(`${service}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "bench", amount: "25" }) })).json();

  // Warm both (JIT, pools, auth cache) before measuring.
  await load(`${service}/v1/customers/${customer.id}`, { duration: 2 }, child.pid);
  await load(`${baseline}/v1/customers/${customer.id}`, { duration: 2 }, baselineChild.pid);

  const result = {};
  for (const [name, path, opts] of [
    ["getCustomer", `/v1/customers/${customer.id}`, () => ({})],
    ["createCustomer", "/v1/customers", postOpts((i) => ({ email: `b${i}-${tag()}@example.com`, name: "Bench" }))],
    ["getCharge", `/v1/charges/${charge.id}`, () => ({})],
    ["createCharge", "/v1/charges", postOpts((i) => ({ orderId: `o${i}-${tag()}`, amount: "25.50" }))],
  ]) {
    if (ONLY && !ONLY.includes(name)) continue;
    const s = await load(service + path, opts(), child.pid);
    const b = await load(baseline + path, opts(), baselineChild.pid);
    const cpuRatio = s.cpuMicrosPerRequest && b.cpuMicrosPerRequest ? Number((b.cpuMicrosPerRequest / s.cpuMicrosPerRequest).toFixed(2)) : null;
    result[name] = { service: s, baseline: b, ratio: Number((s.rps / b.rps).toFixed(2)), cpuRatio };
  }
  console.log(JSON.stringify({ bench: "api", connections: CONNECTIONS, seconds: DURATION, ...result }));
} finally {
  for (const c of children) c.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  await database.drop();
}

/** User + system CPU seconds process `pid` has used so far (Linux's /proc, 100 ticks a second), or null without /proc. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command's ")": state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
