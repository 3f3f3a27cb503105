// /metrics of the built API (dist/main.js) and worker (dist/worker.js), as a production deployment
// runs them (NODE_ENV=production, PostgreSQL, Redis, METRICS_TOKEN, an API with RUN_WORKER=false next
// to a worker), must pass `promtool check metrics`: Prometheus's own parser and linter, stricter than
// the tests' parser. Also checked: which process reports what (the database's figures come from the
// worker only, so a sum over processes counts them once), the token (401 without it), and that an API
// in production without METRICS_TOKEN answers 404. Run after `npm run build`, from the repo root:
//   node .ci/promtool-check.mjs <postgres-url> <redis-url>
// It works in a database of its own on that server, dropped at the end.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const [databaseBase, redisUrl] = process.argv.slice(2);
if (!databaseBase || !redisUrl) throw new Error("usage: node .ci/promtool-check.mjs <postgres-url> <redis-url>");
const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const say = (line) => console.log(`[promtool] ${line}`);
const fail = (message) => {
  throw new Error(message);
};

const root = mkdtempSync(join(tmpdir(), "sg-promtool-"));
const token = randomBytes(24).toString("hex");
const dbName = `sg_promtool_${randomBytes(6).toString("hex")}`;
const admin = new pg.Client({ connectionString: databaseBase });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const databaseUrl = Object.assign(new URL(databaseBase), { pathname: `/${dbName}` }).toString();

/** Every child started, so that a failure anywhere still kills them all. */
const children = [];
let dirs = 0;

/**
 * The production environment of one process. Only what it needs, not this shell's environment: a
 * variable set here (a CI's DATABASE_URL) must not leak in. Its cwd is a temp dir, so a developer's
 * .env in the repo (the config fills unset variables from the cwd's .env) cannot either. Each process
 * gets its own DATA_DIR (its database marker). No chain is configured: none is reachable here, and
 * then neither FEE_RECIPIENT nor a relayer key is required.
 */
function envOf(extra) {
  const dataDir = join(root, `data-${++dirs}`);
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    DEVNET: "false",
    // Without this the API would keep serving 5 s after SIGTERM (the load balancer's time in production).
    SHUTDOWN_DELAY_MS: "0",
    LOG_LEVEL: "info",
    ...extra,
  };
}

/** Starts `node dist/<script>`, and resolves once it logs `message` with the URL it listens on. */
async function start(name, script, env) {
  const child = spawn(process.execPath, [join(repo, "dist", script)], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("exit", (code, signal) => r(code ?? signal)));
  const proc = { name, child, exited, output: () => out, url: null };
  children.push(proc);
  const deadline = Date.now() + 60_000;
  while (!proc.url) {
    // pino writes one JSON object per line; the start line carries the listening URL.
    for (const line of out.split("\n")) {
      if (!line.startsWith("{")) continue;
      const entry = JSON.parse(line);
      if (/listening|worker running/.test(entry.msg) && entry.url) proc.url = entry.url;
    }
    if (proc.url) break;
    if (child.exitCode !== null || child.signalCode !== null) fail(`${name} exited before listening:\n${out.slice(-3000)}`);
    if (Date.now() > deadline) fail(`${name} did not listen within 60 s:\n${out.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  say(`${name} listening on ${proc.url}`);
  return proc;
}

/** SIGTERM, which must end the process with code 0 within 10 s. */
async function stop(proc) {
  const started = Date.now();
  proc.child.kill("SIGTERM");
  const code = await Promise.race([proc.exited, new Promise((r) => setTimeout(() => r("timeout"), 10_000))]);
  if (code !== 0) fail(`${proc.name}: SIGTERM ended it with ${code} after ${Date.now() - started} ms:\n${proc.output().slice(-3000)}`);
  say(`${proc.name}: SIGTERM, exit 0 in ${Date.now() - started} ms`);
}

async function get(url, headers = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, text: await res.text() };
}

/** /metrics with the token, which must pass promtool; returns the text and its families by TYPE line. */
async function scrapeAndLint(proc) {
  const res = await get(`${proc.url}/metrics`, { authorization: `Bearer ${token}` });
  if (res.status !== 200) fail(`${proc.name}: /metrics with the token answered ${res.status}: ${res.text}`);
  // promtool exits non-zero on a parse error or a lint problem and prints each; any line it prints
  // counts as a problem too, so a lint warning cannot slip through on a zero exit code.
  const lint = spawnSync("promtool", ["check", "metrics"], { input: res.text, encoding: "utf8" });
  if (lint.error) fail(`promtool did not run (${lint.error.message}): install Debian's prometheus package`);
  const said = `${lint.stdout}${lint.stderr}`.trim();
  if (lint.status !== 0 || said) fail(`${proc.name}: promtool check metrics (exit ${lint.status}):\n${said}\n--- the metrics:\n${res.text}`);
  const families = new Set([...res.text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  say(`${proc.name}: promtool check metrics passes (${families.size} families, ${res.text.split("\n").length} lines)`);
  return { text: res.text, families };
}

function expectFamilies(proc, families, names, present) {
  for (const name of names) {
    if (families.has(name) !== present) fail(`${proc.name}: /metrics ${present ? "lacks" : "has"} ${name}`);
  }
}

/**
 * promtool lints only families that have samples (its parser drops the empty ones), and with no
 * chain here the worker's chain figures would have none. So the database gets, for a chain no
 * process runs (84532: nothing acts on these rows), what a chain's work leaves: a relayer's status
 * with a balance past 2^53 (printed as an exact integer), the indexer's cursor with its head, relayer
 * transactions, a clone holding money whose payout is blocked, a payment without gas with its gas,
 * and a charge needing review. Only stablegate_relayer_stuck_transactions stays empty: it has a
 * sample per configured chain, and configuring one needs a reachable node.
 */
async function seedChainFigures(chargeId) {
  const chain = 84532;
  const address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO chain_status (chain_id, relayer_address, relayer_balance, relayer_min_balance, checked_at) VALUES ($1, $2, 1234567890123456789012, 10000000000000000, now())`,
      [chain, address],
    );
    await db.query(`INSERT INTO chain_cursors (chain_id, block_number, block_hash, head_block) VALUES ($1, 1000, '0x01', 1003)`, [chain]);
    await db.query(
      `INSERT INTO relayer_transactions (id, chain_id, kind, status, nonce, raw_tx, tx_hashes) VALUES
        ('rtx_promtool1', $1, 'FLUSH', 'SENT', 1, '0x', '{}'), ('rtx_promtool2', $1, 'AUTHORIZATION', 'FAILED', 2, '0x', '{}')`,
      [chain],
    );
    await db.query(`INSERT INTO clones (charge_id, chain_id, address, version, held, payout_blocked_reason) VALUES ($1, $2, $3, 2, 5000000, 'flush_failing')`, [
      chargeId,
      chain,
      address,
    ]);
    await db.query(
      `INSERT INTO authorizations (id, purpose, charge_id, chain_id, from_address, to_address, value, valid_after, valid_before, nonce, signature, status, gas_used)
        VALUES ('auth_promtool', 'PAYMENT', $1, $2, $3, $3, 5000000, 0, 9999999999, '0x01', '0x', 'MINED', 80000)`,
      [chargeId, chain, address],
    );
    await db.query(`UPDATE charges SET review_reason = 'promtool check', review_at = now() WHERE id = $1`, [chargeId]);
  } finally {
    await db.end();
  }
}

let failed = false;
try {
  // The API first: it migrates the fresh database at start (AUTO_MIGRATE's default); the jobs run
  // in the worker only, as with dedicated workers.
  const api = await start("API", "main.js", envOf({ PORT: "0", PUBLIC_URL: "http://127.0.0.1", RUN_WORKER: "false", METRICS_TOKEN: token }));
  // The worker needs a relayer key only for configured chains; one is set as a deployment sets it.
  const worker = await start(
    "worker",
    "worker.js",
    envOf({ WORKER_PORT: "0", METRICS_TOKEN: token, RELAYER_PRIVATE_KEY: `0x${randomBytes(32).toString("hex")}` }),
  );

  // Traffic, so that labelled series exist: health checks, an unmatched URL, a keyed REST call, a
  // GraphQL operation, and an open charge for the worker's database figures.
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      [join(repo, "dist/cli/main.js"), "merchant", "create", "--name", "Promtool", "--test-wallet", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "--json"],
      { cwd: root, env: envOf({ LOG_LEVEL: "warn" }), encoding: "utf8" },
    ),
  );
  const key = created.apiKeys?.test?.secret ?? fail(`merchant create --json gave no test key: ${JSON.stringify(created)}`);
  for (const path of ["/healthz", "/readyz"]) {
    for (const proc of [api, worker]) {
      const res = await get(`${proc.url}${path}`);
      if (res.status !== 200) fail(`${proc.name}: ${path} answered ${res.status}: ${res.text}`);
    }
  }
  if ((await get(`${api.url}/no/such/path`)).status !== 404) fail("API: an unknown path did not answer 404");
  const charge = await fetch(`${api.url}/v1/charges`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ orderId: "promtool-1", amount: "5" }),
  });
  if (charge.status !== 201) fail(`API: POST /v1/charges answered ${charge.status}: ${await charge.text()}`);
  await seedChainFigures((await charge.json()).id);
  const gql = await fetch(`${api.url}/graphql`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ query: "{ charges(first: 1) { totalCount } }" }),
  });
  if (gql.status !== 200) fail(`API: /graphql answered ${gql.status}: ${await gql.text()}`);
  say("traffic: health checks, a 404, a merchant (CLI), a charge (REST), a GraphQL query");

  // Without the token: 401 on both.
  for (const proc of [api, worker]) {
    const res = await get(`${proc.url}/metrics`);
    if (res.status !== 401) fail(`${proc.name}: /metrics without the token answered ${res.status}`);
    const wrong = await get(`${proc.url}/metrics`, { authorization: `Bearer ${token.slice(1)}x` });
    if (wrong.status !== 401) fail(`${proc.name}: /metrics with a wrong token answered ${wrong.status}`);
  }
  say("API and worker: /metrics without the token or with a wrong one is 401");

  // Scraped twice: the second scrape is the one with the first's own request counted, and the
  // event-loop summary's window then restarts (a reset histogram must still print valid numbers).
  await scrapeAndLint(api);
  await scrapeAndLint(worker);
  const apiMetrics = await scrapeAndLint(api);
  const workerMetrics = await scrapeAndLint(worker);

  // Both: the build, prom-client's process defaults, the pool and Redis connections, the event loop.
  const everywhere = [
    "stablegate_build_info",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "nodejs_eventloop_lag_seconds",
    "stablegate_db_pool_connections",
    "stablegate_db_pool_max_connections",
    "stablegate_db_pool_waiting_requests",
    "stablegate_redis_connected",
    "stablegate_event_loop_delay_seconds",
    "stablegate_http_requests_total",
  ];
  // The database's figures: the worker only (the API runs no jobs with RUN_WORKER=false).
  const fromDatabase = [
    "stablegate_payouts_blocked",
    "stablegate_relayer_balance_wei",
    "stablegate_relayer_min_balance_wei",
    "stablegate_relayer_balance_low",
    "stablegate_relayer_stuck_transactions",
    "stablegate_charges_open",
    "stablegate_charges_needing_review",
    "stablegate_clones_held_units",
    "stablegate_relayer_transactions",
    "stablegate_chain_indexed_block",
    "stablegate_chain_head_block",
    "stablegate_chain_lag_blocks",
    "stablegate_gasless_gas_used",
    "stablegate_gasless_gas_today",
    "stablegate_webhook_outbox_pending",
    "stablegate_webhook_outbox_oldest_due_seconds",
  ];
  expectFamilies(api, apiMetrics.families, everywhere, true);
  expectFamilies(worker, workerMetrics.families, everywhere, true);
  expectFamilies(worker, workerMetrics.families, fromDatabase, true);
  expectFamilies(api, apiMetrics.families, fromDatabase, false);
  const { version } = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
  for (const [proc, { text }] of [
    [api, apiMetrics],
    [worker, workerMetrics],
  ]) {
    // The version label is package.json's: the build says which release it is.
    const build = `stablegate_build_info{version="${version}",node="${process.version}",commit="unknown"} 1`;
    if (!text.split("\n").includes(build)) fail(`${proc.name}: no ${build}`);
    if (!/^stablegate_redis_connected\{role="command"\} 1$/m.test(text)) fail(`${proc.name}: its Redis command connection is not reported ready`);
    if (!/^stablegate_db_pool_connections\{state="in_use"\} \d+$/m.test(text)) fail(`${proc.name}: no in_use pool sample`);
  }
  // The API serves subscriptions, so it also holds a subscriber connection; the worker only publishes.
  if (!/^stablegate_redis_connected\{role="subscriber"\} 1$/m.test(apiMetrics.text)) fail("API: its Redis subscriber connection is not reported ready");
  if (!/^stablegate_charges_open\{chain_id="none",status="PENDING"\} 1$/m.test(workerMetrics.text)) fail("worker: the open charge is not counted");
  // Each database family but the stuck transactions has a sample, so promtool has linted it.
  const sampled = new Set([...workerMetrics.text.matchAll(/^([a-z_]+)[{ ]/gm)].map((m) => m[1]));
  for (const name of fromDatabase) {
    if (name !== "stablegate_relayer_stuck_transactions" && !sampled.has(name)) fail(`worker: ${name} has no sample, so promtool did not lint it`);
  }
  if (!/^stablegate_relayer_balance_wei\{chain_id="84532",relayer="0x[0-9a-fA-F]{40}"\} 1234567890123456789012$/m.test(workerMetrics.text))
    fail("worker: the relayer's balance is not printed as an exact integer");
  if (!/^stablegate_http_requests_total\{method="POST",route="\/v1\/charges",status="201"\} 1$/m.test(apiMetrics.text))
    fail("API: the charge's POST is not counted by route");
  say("API and worker: build info, process defaults, pool and Redis gauges; the database's figures on the worker only");

  // In production without METRICS_TOKEN, /metrics is off (404) and the start says so. The database is
  // migrated by now; this API is stopped right after.
  const open = await start("API without METRICS_TOKEN", "main.js", envOf({ PORT: "0", RUN_WORKER: "false" }));
  const off = await get(`${open.url}/metrics`);
  if (off.status !== 404) fail(`API without METRICS_TOKEN: /metrics answered ${off.status}`);
  if (!open.output().includes("METRICS_TOKEN is not set")) fail("API without METRICS_TOKEN: no warning logged at start");
  say("API in production without METRICS_TOKEN: /metrics is 404, and a warning is logged");
  await stop(open);

  await stop(api);
  await stop(worker);
  say("ok: the API's and the worker's metrics pass promtool");
} catch (err) {
  failed = true;
  console.error(`[promtool] FAILED: ${err.message}`);
  for (const proc of children) console.error(`--- ${proc.name}'s last output:\n${proc.output().slice(-2000)}`);
} finally {
  // Nothing may outlive the check: a child still running here failed or never stopped.
  for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(children.map((p) => p.exited));
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  rmSync(root, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
