// The previous release against this one's schema, as in a rolling upgrade: the new release's
// `migrate` runs while the old API serves, then replicas are replaced one by one, so for a while
// both releases serve from the new schema (and an old replica may restart on it). The previous
// release is the newest commit whose package.json version differs from the working tree's; it is
// built from `git archive` with this checkout's node_modules. Then, on a fresh database:
//   1. the new release's migrations that are not the old one's follow the expand/contract rule
//      (.ci/MIGRATIONS-RULE.md), and the old ones are unchanged (the old release checks their checksums);
//   2. the old release migrates, creates a merchant (its CLI) and serves (API A): data made before the upgrade;
//   3. the new release's `migrate` runs while A serves requests;
//   4. A, the old CLI and a freshly started old API (B, a restarted replica) work on the new schema:
//      customers, charges, lists, GraphQL, /readyz, each answer the status and shape the old
//      release's /v1/openapi.json documents;
//   5. the new API (N) serves beside them: it reads what the old release wrote, and the old
//      release reads a charge N made;
//   6. SIGTERM ends A, B and N with code 0.
// Each release runs with the settings it needs: a chain is configured, so the old release gets the
// relayer key it requires of every process, and the new one runs without it as its API and
// `migrate` do in production. Each process has a DATA_DIR of its own (the new release records its
// database in a marker file there).
// Usage: node .ci/previous-release-check.mjs <postgres-url> <redis-url>  (after npm run build)
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Wallet } from "ethers";
import pg from "pg";

const [databaseBase, redisUrl] = process.argv.slice(2);
if (!databaseBase || !redisUrl) throw new Error("usage: node .ci/previous-release-check.mjs <postgres-url> <redis-url>");
const repo = resolve(dirname(new URL(import.meta.url).pathname), "..");
const built = (file) =>
  import(pathToFileURL(join(repo, "dist", file)).href).catch((e) => {
    throw new Error(`dist/${file} cannot be loaded: run npm run build first (${e.message})`);
  });
// From this release's build, so the rule checks the marker its runner actually looks for.
const { NO_TRANSACTION } = await built("db/migrate.js");
const { factoryV2Address } = await built("chain/clones.js");
const began = Date.now();
const say = (line) => console.log(`[previous-release] ${line}`);
class Failure extends Error {}
/** A table or index name in SQL, maybe quoted, maybe schema-qualified; group 1 is the bare name. */
const NAME = String.raw`(?:"?\w+"?\.)?"?(\w+)"?`;
const fail = (message) => {
  throw new Failure(message);
};
const report = [];
const passed = (what) => {
  report.push(what);
  say(`ok  ${what}`);
};
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const git = (...args) => execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 << 20 }).trim();
const versionOf = (text) => {
  try {
    return JSON.parse(text).version ?? null;
  } catch {
    return null;
  }
};

const root = mkdtempSync(join(tmpdir(), "sg-previous-"));
const old = join(root, "release");
const runDir = join(root, "run"); // the processes' working directory: no .env there
const children = new Set();
const admin = new pg.Client({ connectionString: databaseBase });
let dbName = null;
let cleaning = null;
// A cancelled CI job must not leave servers running or a database behind either.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    console.error(`[previous-release] ${signal}: stopping the processes and dropping the database`);
    cleanup().finally(() => process.exit(1));
  });
}

try {
  // --- Which release came before this one -------------------------------------------------------
  if (git("rev-parse", "--is-shallow-repository") === "true") {
    fail("the checkout is shallow, so the previous release may be missing from it: fetch the whole history (git fetch --unshallow, or fetch-depth: 0)");
  }
  const version = versionOf(readFileSync(join(repo, "package.json"), "utf8"));
  if (!version) fail("package.json in the working tree has no version");
  let previous = null;
  for (const sha of git("log", "--format=%H").split("\n").filter(Boolean)) {
    let text;
    try {
      text = git("show", `${sha}:package.json`);
    } catch {
      continue; // no package.json in that commit
    }
    const v = versionOf(text);
    if (v && v !== version) {
      previous = { sha, version: v, subject: git("log", "-1", "--format=%s", sha) };
      break;
    }
  }
  if (!previous)
    fail(`no commit in git log has a package.json version other than the working tree's ${version}: there is no previous release to check against`);
  say(`this release: ${version} (working tree); previous release: ${previous.version} at ${previous.sha.slice(0, 12)} "${previous.subject.slice(0, 80)}"`);

  // --- The previous release, built --------------------------------------------------------------
  mkdirSync(old);
  mkdirSync(runDir);
  execFileSync("git", ["archive", "--format=tar", `--output=${join(root, "release.tar")}`, previous.sha], { cwd: repo, stdio: "inherit" });
  execFileSync("tar", ["-x", "-f", join(root, "release.tar"), "-C", old], { stdio: "inherit" });
  rmSync(join(root, "release.tar"));
  symlinkSync(join(repo, "node_modules"), join(old, "node_modules"), "dir");
  const deps = (file) => {
    const p = JSON.parse(readFileSync(file, "utf8"));
    return { ...p.dependencies, ...p.optionalDependencies };
  };
  const [was, now] = [deps(join(old, "package.json")), deps(join(repo, "package.json"))];
  const changed = Object.keys(was).filter((d) => was[d] !== now[d]);
  if (changed.length > 0)
    say(
      `note: the previous release runs on this checkout's node_modules; its own dependencies differ: ${changed.map((d) => `${d} ${was[d]} -> ${now[d] ?? "(removed)"}`).join(", ")}`,
    );
  let t = Date.now();
  try {
    execFileSync(join(old, "node_modules/.bin/tsc"), ["-p", "."], { cwd: old, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  } catch (e) {
    fail(`the previous release does not build with this checkout's node_modules (tsc -p .):\n${`${e.stdout ?? ""}${e.stderr ?? ""}`.trim().slice(0, 3000)}`);
  }
  // dist/main.js reads the dashboard bundle lazily (/dashboard answers 503 without it): the API
  // starts without it, so the dashboard and SDK builds are left out.
  passed(`previous release ${previous.version} built (tsc -p . in ${seconds(t)})`);

  // --- 1. The new migrations follow the rule; the old ones are untouched -------------------------
  const migrationsOf = (dir) =>
    new Map(
      readdirSync(join(dir, "prisma/migrations"), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => [d.name, readFileSync(join(dir, "prisma/migrations", d.name, "migration.sql"), "utf8")]),
    );
  const [oldMigrations, newMigrations] = [migrationsOf(old), migrationsOf(repo)];
  const problems = [];
  for (const [name, sql] of oldMigrations) {
    if (!newMigrations.has(name))
      problems.push(`${name}: removed, but the previous release applies every migration it has that is not recorded (it would run it again)`);
    else if (newMigrations.get(name) !== sql)
      problems.push(
        `${name}: changed, but the previous release refuses a database whose applied migration differs from its file (checksum); add a new migration instead`,
      );
  }
  const added = [...newMigrations.keys()].filter((n) => !oldMigrations.has(n)).sort();
  const lastOld = [...oldMigrations.keys()].sort().at(-1) ?? "";
  for (const name of added) if (name < lastOld) problems.push(`${name}: sorts before the previous release's last migration (${lastOld}); name it after`);
  const oldTables = tablesCreated([...oldMigrations.values()]);
  const warnings = [];
  for (const name of added) {
    const { problems: p, warnings: w } = lintMigration(newMigrations.get(name), oldTables);
    problems.push(...p.map((x) => `${name}: ${x}`));
    warnings.push(...w.map((x) => `${name}: ${x}`));
  }
  for (const w of warnings) say(`warning: ${w}`);
  if (problems.length > 0) fail(`migrations break the expand/contract rule (.ci/MIGRATIONS-RULE.md):\n  ${problems.join("\n  ")}`);
  passed(
    `migrations: ${oldMigrations.size} of the previous release unchanged; ${added.length} new, by the rule${added.length ? ` (${added.join(", ")})` : ""}`,
  );

  // --- A fresh database, and each release's settings ---------------------------------------------
  await admin.connect();
  dbName = `sg_previous_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  const databaseUrl = Object.assign(new URL(databaseBase), { pathname: `/${dbName}` }).toString();
  const feeRecipient = Wallet.createRandom().address;
  const shared = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    HOST: "127.0.0.1",
    PORT: "0",
    RUN_WORKER: "false",
    LOG_LEVEL: "info",
    // The checks and the traffic during `migrate` use one key each far faster than a client would.
    RATE_LIMIT_CREATE: "100000",
    RATE_LIMIT_READ: "100000",
    RATE_LIMIT_LIST: "100000",
    FEE_RECIPIENT: feeRecipient,
    // Base Sepolia, so test-mode charges have a chain. Nothing listens on port 9: the API
    // processes only read the chain state the worker (not started) writes to the database.
    CHAIN_84532_RPC_URL: "http://127.0.0.1:9",
    CHAIN_84532_FACTORY: factoryV2Address(feeRecipient),
  };
  const oldRelease = { name: "previous release", dir: old, env: { ...shared, RELAYER_PRIVATE_KEY: Wallet.createRandom().privateKey } };
  // AUTO_MIGRATE off for N: in a rolling upgrade `migrate` has already run, and N must find all it needs.
  const newRelease = { name: "this release", dir: repo, env: shared, apiEnv: { AUTO_MIGRATE: "false" } };
  let runs = 0;
  const dataDir = (owner) => {
    const dir = join(root, "data", `${++runs}-${owner}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const cli = async (release, ...args) => {
    const env = { ...release.env, DATA_DIR: dataDir("cli") };
    const child = launch(`${release.name}'s CLI (${args.join(" ")})`, join(release.dir, "dist/cli/main.js"), args, env);
    const exit = await within(child.exited, 120_000);
    if (!exit) fail(`${child.name}: still running after 120 s`);
    if (exit.code !== 0) fail(`${child.name}: exited with ${exit.code ?? exit.signal}:\n${child.output.slice(-40).join("\n")}`);
    children.delete(child);
    return child.stdout;
  };
  const startApi = async (name, release) => {
    const env = { ...release.env, ...release.apiEnv, DATA_DIR: dataDir(name.split(" ")[0]) };
    const child = launch(name, join(release.dir, "dist/main.js"), [], env);
    const url = await within(
      Promise.race([
        child.listening,
        child.exited.then((exit) => fail(`${name} exited at start (code ${exit.code ?? exit.signal}):\n${child.output.slice(-30).join("\n")}`)),
      ]),
      60_000,
    );
    if (!url) fail(`${name} did not log that it listens within 60 s`);
    child.url = url;
    say(`${name}: pid ${child.process.pid}, ${url}`);
    return child;
  };

  // --- 2. The previous release before the upgrade ------------------------------------------------
  await cli(oldRelease, "migrate");
  const wallet = Wallet.createRandom().address;
  const merchantOf = async (name) => {
    const created = JSON.parse(await cli(oldRelease, "merchant", "create", "--name", name, "--test-wallet", wallet, "--json"));
    const key = created?.apiKeys?.test?.secret;
    if (!created?.merchant?.id || !key) fail(`the previous release's 'merchant create --json' printed no merchant id or test API key`);
    return { id: created.merchant.id, key };
  };
  const before = await merchantOf("Before the upgrade");
  passed(`previous release's CLI: migrate on a fresh database (${dbName}), merchant create ${before.id}`);
  const apiA = await startApi("A (previous release)", oldRelease);
  const oldDoc = await documentOf(apiA);
  const early = await exercise(apiA, oldDoc, before.key, "pre");
  passed(`A (previous release, started on its own schema): customer ${early.customer}, charge ${early.charge}`);

  // --- 3. This release's migrate, while A serves -------------------------------------------------
  t = Date.now();
  let migrating = true;
  const traffic = serve(apiA, oldDoc, before.key, early.charge, () => migrating);
  const migrated = await cli(newRelease, "migrate").finally(() => {
    migrating = false;
  });
  const served = await traffic;
  if (served.error) fail(`A while this release's migrate ran: ${served.error.message}`);
  passed(
    `this release's migrate while A serves (${seconds(t)}; A answered ${served.requests} requests meanwhile, slowest ${served.slowest} ms): ${migrated.trim().split("\n").join(" | ").slice(0, 300) || "(no output)"}`,
  );
  const applied = await appliedMigrations(databaseUrl);
  const missing = [...newMigrations.keys()].filter((n) => !applied.has(n));
  if (missing.length > 0) fail(`after this release's migrate, not recorded as applied: ${missing.join(", ")}`);

  // --- 4. The previous release on the new schema -------------------------------------------------
  const a = await exercise(apiA, oldDoc, before.key, "a", [early.charge]);
  passed(`A on the new schema: customers, charges (create, get, list, incl. one made before the upgrade), GraphQL, /readyz`);
  const after = await merchantOf("After the upgrade");
  passed(`previous release's CLI on the new schema: its start-time migrate accepts it, merchant create ${after.id}`);
  const apiB = await startApi("B (previous release, restarted)", oldRelease);
  const b = await exercise(apiB, oldDoc, after.key, "b");
  await exercise(apiB, oldDoc, before.key, "b2", [early.charge, a.charge]);
  passed(`B (previous release started on the new schema): same checks, for both merchants`);

  // --- 5. This release beside it -----------------------------------------------------------------
  const apiN = await startApi("N (this release, no relayer key, AUTO_MIGRATE=false)", newRelease);
  const newDoc = await documentOf(apiN);
  const n = await exercise(apiN, newDoc, before.key, "n", [early.charge, a.charge]);
  await exercise(apiN, newDoc, after.key, "n2", [b.charge]);
  passed(`N (this release) beside A and B: reads the charges and customers the previous release made`);
  for (const api of [apiA, apiB]) {
    const key = before.key;
    const got = await request(api, oldDoc, "GET", `/v1/charges/${n.charge}`, { key });
    if (got.id !== n.charge || got.orderId !== n.orderId) fail(`${api.name}: GET /v1/charges/${n.charge} (made by N) answered another charge`);
    const listed = await request(api, oldDoc, "GET", `/v1/charges?limit=100`, { key });
    if (!listed.data.some((c) => c.id === n.charge)) fail(`${api.name}: GET /v1/charges does not list the charge N made`);
    const customers = await request(api, oldDoc, "GET", `/v1/customers?limit=100`, { key });
    if (!customers.data.some((c) => c.id === n.customer)) fail(`${api.name}: GET /v1/customers does not list the customer N made`);
  }
  passed(`A and B (previous release) read the charge and customer N (this release) made`);

  // --- 6. SIGTERM --------------------------------------------------------------------------------
  const stopped = await Promise.all([apiA, apiB, apiN].map(stop));
  passed(`SIGTERM: ${stopped.join(", ")}`);
  say(`PASS: release ${previous.version} works on ${version}'s schema, beside ${version} (${seconds(began)})`);
} catch (e) {
  process.exitCode = 1;
  console.error(`[previous-release] FAIL: ${e instanceof Failure ? e.message : e.stack}`);
  for (const child of children) {
    console.error(`[previous-release] last output of ${child.name} (pid ${child.process.pid}):\n${child.output.slice(-40).join("\n")}`);
  }
  if (report.length) console.error(`[previous-release] passed before the failure:\n  ${report.join("\n  ")}`);
} finally {
  await cleanup();
}

// --- Helpers -----------------------------------------------------------------------------------

/** Stops what is still running, drops the database and removes the scratch directory; once. */
function cleanup() {
  cleaning ??= (async () => {
    await Promise.all(
      [...children].map(async (child) => {
        if (child.process.exitCode !== null || child.process.signalCode !== null) return;
        child.process.kill("SIGTERM");
        // Long enough for the new release's shutdown delay and drain, then no more waiting.
        if (!(await within(child.exited, 20_000))) child.process.kill("SIGKILL");
      }),
    );
    if (dbName)
      await admin
        .query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
        .catch((e) => console.error(`[previous-release] could not drop ${dbName}: ${e.message}`));
    await admin.end().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  })();
  return cleaning;
}

/** `promise`'s value, or undefined after `ms`; the timer must not keep the script alive once it is done. */
function within(promise, ms) {
  let timer;
  const timeout = new Promise((r) => (timer = setTimeout(r, ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs a release's entry point in runDir with `env` (and nothing else from this environment). It is
 * tracked until it ends well, so a failure can stop it and show its last lines.
 */
function launch(name, main, args, env) {
  const proc = spawn(process.execPath, [main, ...args], { cwd: runDir, env, stdio: ["ignore", "pipe", "pipe"] });
  const child = { name, process: proc, output: [], stdout: "", url: null };
  children.add(child);
  child.exited = new Promise((r) => proc.once("close", (code, signal) => r({ code, signal })));
  let found;
  child.listening = new Promise((r) => (found = r));
  proc.stdout.on("data", (chunk) => (child.stdout += chunk));
  for (const stream of [proc.stdout, proc.stderr]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
      child.output.push(line);
      if (child.output.length > 200) child.output.shift();
      try {
        const entry = JSON.parse(line);
        if (typeof entry.url === "string" && /^http:\/\/127\.0\.0\.1:\d+$/.test(entry.url) && /listening/i.test(entry.msg ?? "")) found(entry.url);
      } catch {
        /* not a log line */
      }
    });
  }
  return child;
}

async function appliedMigrations(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`);
    return new Set(rows.map((r) => r.migration_name));
  } finally {
    await client.end();
  }
}

/** SIGTERM by pid; it must exit with code 0 within 60 s. */
async function stop(child) {
  const since = Date.now();
  child.process.kill("SIGTERM");
  const exit = await within(child.exited, 60_000);
  if (!exit) fail(`${child.name}: still running 60 s after SIGTERM`);
  if (exit.code !== 0) fail(`${child.name}: SIGTERM ended it with ${exit.code ?? exit.signal}:\n${child.output.slice(-20).join("\n")}`);
  children.delete(child);
  return `${child.name.split(" ")[0]} exit 0 in ${seconds(since)}`;
}

/** The API's /v1/openapi.json as a checker of its answers. */
async function documentOf(api) {
  const res = await fetch(`${api.url}/v1/openapi.json`);
  if (res.status !== 200) fail(`${api.name}: GET /v1/openapi.json answered ${res.status}`);
  const doc = await res.json();
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  // Components refer to each other as #/components/…: each reference, in them and in an operation's
  // schema, is pointed at the components added here under their own id.
  const rebased = (schema) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"components#/'));
  ajv.addSchema({ $id: "components", ...rebased(doc.components) }, "components");
  const templates = Object.keys(doc.paths)
    .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`) }))
    .sort((x, y) => (x.template.match(/\{/g)?.length ?? 0) - (y.template.match(/\{/g)?.length ?? 0));
  const compiled = new Map();
  return {
    /** The operation of a request: its template and documented success status. */
    operation(method, path) {
      const template = templates.find((t) => t.pattern.test(path))?.template;
      const op = template && doc.paths[template][method.toLowerCase()];
      if (!op) fail(`${api.name}: ${method} ${path} is not in its /v1/openapi.json`);
      const ok = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s));
      if (ok.length !== 1) fail(`${api.name}: ${method} ${template} documents ${ok.length} success statuses (${ok})`);
      return { template, op, status: Number(ok[0]) };
    },
    /** What is wrong with a JSON answer by its documented schema, or null. */
    problem(op, status, body) {
      const schema = op.responses[String(status)]?.content?.["application/json"]?.schema;
      if (!schema) return null;
      let validate = compiled.get(schema);
      if (!validate) {
        validate = ajv.compile(rebased(schema));
        compiled.set(schema, validate);
      }
      return validate(body) ? null : ajv.errorsText(validate.errors);
    },
  };
}

/** A /v1 request whose answer must have the documented success status and shape. */
async function request(api, doc, method, path, { key, body } = {}) {
  const { template, op, status } = doc.operation(method, path.split("?")[0]);
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { "X-API-Key": key, ...(body !== undefined && { "Content-Type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== status) fail(`${api.name}: ${method} ${path} answered ${res.status}, documented ${status}: ${text.slice(0, 500)}`);
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    fail(`${api.name}: ${method} ${path} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  const problem = doc.problem(op, res.status, json);
  if (problem) fail(`${api.name}: ${method} ${template} ${res.status}: the answer does not match its documented schema: ${problem}`);
  return json;
}

/**
 * Writes and reads through `api` while `going()`: a migration that locks a table the previous
 * release uses, or breaks what it reads, shows here. Resolves (never rejects, so it can be awaited
 * after the migration) with the count, the slowest answer and the first error.
 */
async function serve(api, doc, key, charge, going) {
  let requests = 0;
  let slowest = 0;
  const timed = async (...args) => {
    const since = Date.now();
    await request(api, doc, ...args);
    requests++;
    slowest = Math.max(slowest, Date.now() - since);
  };
  try {
    for (let i = 0; going(); i++) {
      await timed("POST", "/v1/customers", { key, body: { email: `during-${process.pid}-${i}@example.com`, name: `During ${i}` } });
      await timed("GET", `/v1/charges/${charge}`, { key });
      await timed("GET", "/v1/charges?limit=10", { key });
    }
    return { requests, slowest };
  } catch (error) {
    return { requests, slowest, error };
  }
}

/**
 * What a client does: a customer, a charge for it, the charge by id, the charge list, the customer
 * list, GraphQL's charges and charge, /readyz. `known` are charges made earlier (by any release)
 * that must read back.
 */
async function exercise(api, doc, key, tag, known = []) {
  const suffix = `${tag}-${process.pid}-${Date.now().toString(36)}`;
  const customer = await request(api, doc, "POST", "/v1/customers", { key, body: { email: `buyer-${suffix}@example.com`, name: `Buyer ${tag}` } });
  const orderId = `order-${suffix}`;
  const charge = await request(api, doc, "POST", "/v1/charges", {
    key,
    body: { orderId, amount: "12.34", description: "previous-release check", customerId: customer.id },
  });
  if (charge.status !== "PENDING" || charge.amount !== "12.34" || charge.orderId !== orderId) {
    fail(`${api.name}: POST /v1/charges answered ${JSON.stringify(charge).slice(0, 300)}`);
  }
  for (const id of [charge.id, ...known]) {
    const got = await request(api, doc, "GET", `/v1/charges/${id}`, { key });
    if (got.id !== id) fail(`${api.name}: GET /v1/charges/${id} answered charge ${got.id}`);
  }
  const charges = await request(api, doc, "GET", "/v1/charges?limit=100", { key });
  for (const id of [charge.id, ...known]) if (!charges.data.some((c) => c.id === id)) fail(`${api.name}: GET /v1/charges does not list ${id}`);
  const customers = await request(api, doc, "GET", "/v1/customers?limit=100", { key });
  if (!customers.data.some((c) => c.id === customer.id)) fail(`${api.name}: GET /v1/customers does not list ${customer.id}`);

  const query = `query Check($id: ID!) {
    charges(first: 100) { totalCount edges { node { id orderId status amount customer { id email } } } }
    charge(id: $id) { id orderId status amount livemode customer { id } }
    customers(first: 100) { totalCount edges { node { id email } } }
  }`;
  const res = await fetch(`${api.url}/graphql`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ query, variables: { id: charge.id } }),
  });
  const text = await res.text();
  if (res.status !== 200) fail(`${api.name}: POST /graphql answered ${res.status}, expected 200: ${text.slice(0, 500)}`);
  const gql = JSON.parse(text);
  if (gql.errors?.length) fail(`${api.name}: GraphQL errors: ${JSON.stringify(gql.errors).slice(0, 500)}`);
  const ids = gql.data?.charges?.edges?.map((e) => e.node.id) ?? [];
  for (const id of [charge.id, ...known]) if (!ids.includes(id)) fail(`${api.name}: GraphQL charges does not list ${id}`);
  if (gql.data.charge?.id !== charge.id || gql.data.charge.customer?.id !== customer.id)
    fail(`${api.name}: GraphQL charge(id) answered ${JSON.stringify(gql.data.charge)}`);
  if (!gql.data.customers.edges.some((e) => e.node.id === customer.id)) fail(`${api.name}: GraphQL customers does not list ${customer.id}`);

  const ready = await fetch(`${api.url}/readyz`);
  const readyBody = await ready.text();
  if (ready.status !== 200 || JSON.parse(readyBody).status !== "ok")
    fail(`${api.name}: /readyz answered ${ready.status} ${readyBody}, expected 200 {"status":"ok",…}`);
  return { customer: customer.id, charge: charge.id, orderId };
}

// --- The expand/contract rule, read from the SQL -----------------------------------------------

/** The statements of a migration, comments dropped, split at semicolons outside quotes and $$ bodies. */
function statements(sql) {
  const out = [];
  let current = "";
  for (let i = 0; i < sql.length;) {
    const rest = sql.slice(i);
    const dollar = /^\$(\w*)\$/.exec(rest);
    if (rest.startsWith("--")) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
    } else if (rest.startsWith("/*")) {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (sql[i] === "'" || sql[i] === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === sql[i] && sql[j + 1] !== sql[i])) j += sql[j] === sql[i] ? 2 : 1;
      current += sql.slice(i, j + 1);
      i = j + 1;
    } else if (dollar) {
      const end = sql.indexOf(dollar[0], i + dollar[0].length);
      const stop = end === -1 ? sql.length : end + dollar[0].length;
      current += sql.slice(i, stop);
      i = stop;
    } else if (sql[i] === ";") {
      out.push(current);
      current = "";
      i++;
    } else {
      current += sql[i++];
    }
  }
  out.push(current);
  return out.map((s) => s.replace(/\s+/g, " ").trim()).filter(Boolean);
}

/** Tables by their bare name in lower case: PostgreSQL folds unquoted names, and Prisma quotes its own. */
function tablesCreated(sqls) {
  const tables = new Set();
  for (const sql of sqls) {
    for (const s of statements(sql)) {
      const created = new RegExp(String.raw`^CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?${NAME}`, "i").exec(s);
      if (created) tables.add(created[1].toLowerCase());
      const renamed = new RegExp(String.raw`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?${NAME} RENAME TO ${NAME}`, "i").exec(s);
      if (renamed) tables.add(renamed[2].toLowerCase());
    }
  }
  return tables;
}

/**
 * A new migration by the rule: no contraction (drops, renames, type changes, new NOT NULL without
 * a default) unless it says `-- contract: <why>`; indexes on the previous release's tables only
 * CONCURRENTLY, which runs only in a migration whose first line is NO_TRANSACTION, holding nothing
 * but such index statements (the runner runs them one by one, so each must be safe to run again).
 */
function lintMigration(sql, oldTables) {
  const problems = [];
  const warnings = [];
  const contract = /^\s*--\s*contract:\s*\S/im.test(sql);
  const list = statements(sql);
  const concurrent = list.filter((s) => /^(CREATE (UNIQUE )?INDEX|DROP INDEX|REINDEX)\b.*\bCONCURRENTLY\b/i.test(s));
  const noTransaction = sql.startsWith(NO_TRANSACTION);
  if (concurrent.length > 0 && !noTransaction) {
    problems.push(
      `CONCURRENTLY cannot run inside a transaction, and the runner wraps each migration in one unless its first line is exactly '${NO_TRANSACTION}'`,
    );
  }
  if (noTransaction) {
    if (concurrent.length !== list.length) {
      problems.push(
        `a '${NO_TRANSACTION}' migration holds only index statements with CONCURRENTLY: anything else would run outside a transaction, half applied when a later statement fails`,
      );
    }
    for (const s of concurrent) {
      if (!/^(CREATE (UNIQUE )?INDEX CONCURRENTLY IF NOT EXISTS|DROP INDEX CONCURRENTLY IF EXISTS|REINDEX)\b/i.test(s)) {
        problems.push(
          `"${shorten(s)}": say IF NOT EXISTS (IF EXISTS for a drop): the runner runs these one by one, so after a failure part-way it runs them again`,
        );
      }
    }
    const code = sql
      .split("\n")
      .filter((line) => !line.trimStart().startsWith("--"))
      .join("\n");
    if (/;[ \t]*\S/.test(code)) {
      problems.push(`each statement ends its line with ';': the runner splits a '${NO_TRANSACTION}' migration only there`);
    }
  }
  for (const s of list) {
    const short = shorten(s);
    const index = new RegExp(String.raw`^CREATE (UNIQUE )?INDEX (CONCURRENTLY )?(?:IF NOT EXISTS )?(?:${NAME} )?ON (?:ONLY )?${NAME}`, "i").exec(s);
    const indexed = index && oldTables.has(index[4].toLowerCase());
    if (indexed && !index[2]) {
      problems.push(
        `"${short}": an index on the previous release's table ${index[4]} must be built CONCURRENTLY, in a '${NO_TRANSACTION}' migration (a plain CREATE INDEX blocks its writes while it builds)`,
      );
    }
    if (indexed && index[1]) warnings.push(`"${short}": a unique index on ${index[4]} must hold for what the previous release writes`);
    const alter = new RegExp(String.raw`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?${NAME} (.*)$`, "i").exec(s);
    const clauses = alter ? alter[2].split(/,(?![^()]*\))/).map((c) => c.trim()) : [];
    const contraction = [
      [/^DROP (TABLE|TYPE|VIEW|MATERIALIZED VIEW|FUNCTION|SCHEMA|SEQUENCE)\b/i.test(s), "drops something the previous release may use"],
      [/^DROP INDEX\b/i.test(s), "drops an index the previous release may rely on (ON CONFLICT, speed)"],
      // Clause by clause: COLUMN is optional in ALTER TABLE ... DROP [COLUMN] name.
      [clauses.some((c) => /^DROP\b/i.test(c)), "drops a column or constraint the previous release may use"],
      [/\bRENAME\b/i.test(s), "renames something the previous release uses by its old name"],
      [/\bALTER (COLUMN )?\S+ (SET DATA )?TYPE\b/i.test(s), "changes a column's type under the previous release"],
      [/\bSET NOT NULL\b/i.test(s), "makes a column required that the previous release may leave empty"],
      [/\bDROP DEFAULT\b/i.test(s), "drops a default the previous release's inserts may rely on"],
      [/\bDROP VALUE\b/i.test(s), "drops an enum value"],
    ].find(([found]) => found);
    if (contraction) {
      if (contract) warnings.push(`contraction (marked -- contract:): "${short}"`);
      else
        problems.push(
          `"${short}" ${contraction[1]}: expand now, contract in a later release, in a migration marked '-- contract: <why>' once no supported release reads the old shape`,
        );
    }
    if (alter && oldTables.has(alter[1].toLowerCase())) {
      for (const clause of clauses) {
        if (
          /^ADD (COLUMN )?/i.test(clause) &&
          !/^ADD (CONSTRAINT|PRIMARY|UNIQUE|FOREIGN|CHECK)\b/i.test(clause) &&
          /\bNOT NULL\b/i.test(clause) &&
          !/\bDEFAULT\b/i.test(clause) &&
          !/\bGENERATED\b/i.test(clause)
        ) {
          if (contract) warnings.push(`required column without a default (marked -- contract:): "${clause}"`);
          else
            problems.push(
              `"${clause}" on ${alter[1]}: a new column of the previous release's table must be nullable or have a default (its inserts do not name it)`,
            );
        }
        if (/^ADD (CONSTRAINT \S+ )?(CHECK|FOREIGN KEY|UNIQUE)\b/i.test(clause)) {
          warnings.push(
            `"${clause}" on ${alter[1]}: a new constraint must hold for what the previous release writes (NOT VALID, then VALIDATE CONSTRAINT, keeps its writes going)`,
          );
        }
      }
    }
    if (/^ALTER TYPE .* ADD VALUE\b/i.test(s)) {
      warnings.push(`"${short}": the previous release cannot read rows with this value; this release must not write it while the previous one still serves`);
    }
  }
  return { problems, warnings };
}

function shorten(statement) {
  return statement.length > 110 ? `${statement.slice(0, 110)}…` : statement;
}
