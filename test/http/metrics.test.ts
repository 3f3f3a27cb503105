// /metrics as Prometheus reads it (a text-format parser, not a regexp): this process's requests by
// route pattern and status with their latency, its live connections, its build, process defaults,
// database pool and Redis connections, and, only where the process runs the jobs, what the database
// says an operator watches (open charges, the webhook outbox). In production it needs METRICS_TOKEN.
// `promtool check metrics` runs on the built processes' output in CI (.ci/promtool-check.mjs).
import { readFileSync } from "node:fs";
import parsePrometheus from "parse-prometheus-text-format";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { waitFor } from "../helpers/chain.js";
import { buildTestApp, startApp, startSecondInstance, type TestApp, UNLIMITED_ADDRESS } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";
import { recordingLogger } from "../helpers/logs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
}, 60_000);
afterAll(() => app?.stop());

async function scrape() {
  const res = await app.call("GET", "/metrics", { key: null });
  expect(res.status).toBe(200);
  return parsePrometheus(res.text);
}
const sample = (families: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string>) =>
  families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

it("counts requests by route pattern and status, never by raw URL", async () => {
  for (let i = 0; i < 3; i++) expect((await app.call("POST", "/v1/charges", { body: { orderId: `m-${i}`, amount: "5" } })).status).toBe(201);
  await app.call("GET", "/v1/charges/chrg_doesnotexist");
  await app.call("GET", "/no/such/path/1");
  await app.call("GET", "/no/such/path/2");
  const families = await scrape();
  expect(Number(sample(families, "stablegate_http_requests_total", { method: "POST", route: "/v1/charges", status: "201" })?.value)).toBe(3);
  expect(Number(sample(families, "stablegate_http_requests_total", { route: "/v1/charges/:id", status: "404" })?.value)).toBe(1);
  expect(Number(sample(families, "stablegate_http_requests_total", { route: "unmatched", status: "404" })?.value)).toBe(2);
  const latency = families.find((f) => f.name === "stablegate_http_request_duration_seconds");
  expect(latency?.type).toBe("HISTOGRAM");
  // Open charges from the database: three PENDING, no chain picked yet.
  expect(sample(families, "stablegate_charges_open", { chain_id: "none", status: "PENDING" })?.value).toBe("3");
  expect(sample(families, "stablegate_webhook_outbox_pending", {})?.value).toBe("0");
  // Every database figure is there, with no samples where there is nothing to report.
  for (const name of [
    "stablegate_relayer_transactions",
    "stablegate_charges_needing_review",
    "stablegate_relayer_stuck_transactions",
    "stablegate_chain_lag_blocks",
  ]) {
    expect(families.find((f) => f.name === name)?.type, name).toBe("GAUGE");
  }
});

it("counts GraphQL operations by type and outcome", async () => {
  await app.gql("{ charges(first: 1) { totalCount } }");
  await app.gql('{ charge(id: "chrg_nope") { id } }');
  await app.gql('mutation { createCustomer(input: { email: "m@example.com", name: "M" }) { id } }');
  const families = await scrape();
  expect(sample(families, "stablegate_graphql_operations_total", { type: "query", outcome: "ok" })?.value).toBe("1");
  expect(sample(families, "stablegate_graphql_operations_total", { type: "query", outcome: "error" })?.value).toBe("1");
  expect(sample(families, "stablegate_graphql_operations_total", { type: "mutation", outcome: "ok" })?.value).toBe("1");
});

it("reports this process's open live connections and subscriptions", async () => {
  const client = wsClient(app.url, app.testKey);
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "m-live", amount: "5" } })).body;
  const updates = subscribe(client, `subscription($id: ID!) { chargeUpdated(id: $id) { status } }`, { id: charge.id });
  await updates.waitFor(1);
  const open = await scrape();
  expect(sample(open, "stablegate_live_connections", { caller: "key" })?.value).toBe("1");
  expect(Number(sample(open, "stablegate_live_subscriptions", {})?.value)).toBeGreaterThanOrEqual(1);
  expect(sample(open, "stablegate_pubsub_resyncs_total", {})?.value).toBe("0");
  await client.dispose();
  await waitFor("the connection to close", async () => sample(await scrape(), "stablegate_live_connections", { caller: "key" })?.value === "0");
});

/** The families the database's figures give: only a process that runs the jobs reports them. */
const FROM_DATABASE = [
  "stablegate_payouts_blocked",
  "stablegate_relayer_balance_wei",
  "stablegate_relayer_stuck_transactions",
  "stablegate_charges_open",
  "stablegate_charges_needing_review",
  "stablegate_clones_held_units",
  "stablegate_chain_indexed_block",
  "stablegate_webhook_outbox_pending",
];

it("follows the naming rules promtool lints: counters and only counters end in _total, every family has help", async () => {
  const families = await scrape();
  expect(families.length).toBeGreaterThan(20);
  for (const f of families) {
    expect(f.name.endsWith("_total"), `${f.name} (${f.type})`).toBe(f.type === "COUNTER");
    expect(f.help.length, f.name).toBeGreaterThan(5);
  }
  // prom-client's gauges named like counters are left out; the same figures by type stay.
  expect(families.find((f) => f.name === "nodejs_active_handles_total")).toBeUndefined();
  expect(families.find((f) => f.name === "nodejs_active_handles")?.type).toBe("GAUGE");
});

it("reports the build and prom-client's process defaults", async () => {
  const families = await scrape();
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  expect(families.find((f) => f.name === "stablegate_build_info")?.metrics).toEqual([
    { labels: { version, node: process.version, commit: process.env.GIT_COMMIT || "unknown" }, value: "1" },
  ]);
  expect(families.find((f) => f.name === "process_cpu_seconds_total")?.type).toBe("COUNTER");
  expect(Number(sample(families, "process_resident_memory_bytes", {})?.value)).toBeGreaterThan(0);
  expect(families.find((f) => f.name === "nodejs_heap_size_used_bytes")?.type).toBe("GAUGE");
});

it("reports how late the event loop runs as a summary: quantiles per scrape, sum and count since start", async () => {
  type Summary = { quantiles: Record<string, string>; count: string; sum: string };
  const delay = async () => {
    const family = (await scrape()).find((f) => f.name === "stablegate_event_loop_delay_seconds");
    expect(family?.type).toBe("SUMMARY");
    expect(family?.metrics).toHaveLength(1);
    return family!.metrics[0] as unknown as Summary;
  };
  const first = await delay();
  // The histogram samples the loop as it runs: wait for the next samples, not a fixed time.
  const second = await waitFor("more event loop samples", async () => {
    const next = await delay();
    return Number(next.count) > Number(first.count) && next;
  });
  expect(Object.keys(second.quantiles).sort()).toEqual(["0.5", "0.99", "1"]);
  // Quantiles of one window: finite seconds, none above a higher quantile.
  const [median, p99, max] = ["0.5", "0.99", "1"].map((q) => Number(second.quantiles[q]));
  expect([median, p99, max].every((q) => Number.isFinite(q) && q! >= 0)).toBe(true);
  expect(median).toBeLessThanOrEqual(p99!);
  expect(p99).toBeLessThanOrEqual(max!);
  // The count keeps growing across scrapes (a counter's behaviour), unlike the quantiles' window.
  expect(Number(second.count)).toBeGreaterThan(Number(first.count));
  expect(Number(second.sum)).toBeGreaterThanOrEqual(Number(first.sum));
});

it("reports its PostgreSQL pool on PostgreSQL and its Redis connections with Redis; neither on the embedded database alone", async () => {
  const families = await scrape();
  const pool = families.find((f) => f.name === "stablegate_db_pool_connections");
  if (process.env.DATABASE_URL) {
    expect(pool?.type).toBe("GAUGE");
    // The harness opens PostgreSQL with a pool of 20: what is open, busy or idle, fits in it.
    const inUse = Number(sample(families, "stablegate_db_pool_connections", { state: "in_use" })?.value);
    const idle = Number(sample(families, "stablegate_db_pool_connections", { state: "idle" })?.value);
    expect(Number.isInteger(inUse) && Number.isInteger(idle) && inUse >= 0 && idle >= 0).toBe(true);
    expect(inUse + idle).toBeLessThanOrEqual(20);
    expect(sample(families, "stablegate_db_pool_max_connections", {})?.value).toBe("20");
    expect(sample(families, "stablegate_db_pool_waiting_requests", {})?.value).toBe("0");
  } else {
    // The embedded database is one connection inside the process: there is no pool to report.
    expect(pool).toBeUndefined();
    expect(families.find((f) => f.name === "stablegate_db_pool_waiting_requests")).toBeUndefined();
  }
  if (process.env.REDIS_URL) {
    // An API process publishes (command) and serves subscriptions (subscriber).
    expect(sample(families, "stablegate_redis_connected", { role: "command" })?.value).toBe("1");
    expect(sample(families, "stablegate_redis_connected", { role: "subscriber" })?.value).toBe("1");
  } else {
    expect(families.find((f) => f.name === "stablegate_redis_connected")).toBeUndefined();
  }
});

it("leaves the database's figures to the processes that run the jobs: an API with RUN_WORKER=false has none", async () => {
  const withJobs = await scrape();
  for (const name of FROM_DATABASE) expect(withJobs.find((f) => f.name === name)?.type, name).toBe("GAUGE");
  const api = await startSecondInstance(app, { RUN_WORKER: "false" });
  try {
    const res = await fetch(`${api.url}/metrics`);
    expect(res.status).toBe(200);
    const families = parsePrometheus(await res.text());
    for (const name of FROM_DATABASE)
      expect(
        families.find((f) => f.name === name),
        name,
      ).toBeUndefined();
    // Its own figures are all there.
    for (const name of ["stablegate_build_info", "stablegate_http_requests_total", "stablegate_event_loop_delay_seconds", "process_cpu_seconds_total"]) {
      expect(
        families.find((f) => f.name === name),
        name,
      ).toBeDefined();
    }
  } finally {
    await api.stop();
  }
});

it("in production, needs METRICS_TOKEN: without it /metrics is 404 and a warning says so; with it, the token is required", async () => {
  const env = { NODE_ENV: "production", LOG_LEVEL: "silent", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS };
  const { logger, lines } = recordingLogger();
  const off = await buildTestApp(loadConfig(env), { db: app.db, logger });
  try {
    const url = await off.start(0);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/METRICS_TOKEN/);
    expect(lines().filter((l) => l.level === 40 && /METRICS_TOKEN is not set/.test(l.msg))).toHaveLength(1);
  } finally {
    await off.stop();
  }
  const token = "a-production-metrics-token";
  const on = await startSecondInstance(app, { NODE_ENV: "production", METRICS_TOKEN: token });
  try {
    expect((await fetch(`${on.url}/metrics`)).status).toBe(401);
    const res = await fetch(`${on.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(parsePrometheus(await res.text()).find((f) => f.name === "stablegate_build_info")).toBeDefined();
  } finally {
    await on.stop();
  }
});
