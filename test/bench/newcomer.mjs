// `node test/bench/newcomer.mjs [--repo <path or URL>] [--rev <rev>]`: a newcomer's first minutes,
// timed. A fresh `git clone` of the repository (default: the one this file is in) at `rev` (default:
// HEAD; uncommitted changes are not in it) into a temporary directory, `npm ci` there (network and
// disk bound; its `prepare` builds once), then `npm start` on an empty data directory: the time until
// /healthz answers and until /readyz is ready, then until the first devnet charge completes (a charge
// created with the printed demo key, paid with `npx stablegate devnet pay`, until its status is
// COMPLETED). Then SIGTERM, and a second `npm start`: its time until ready (an unchanged tree is not
// rebuilt). Prints a table (stderr) and one JSON line. Removes the clone afterwards.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./service.mjs";

const log = (...a) => console.error("[newcomer]", ...a);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};
const repo = arg("repo", resolve(dirname(fileURLToPath(import.meta.url)), "../.."));
const rev = arg("rev", "HEAD");
const seconds = (ms) => Number((ms / 1000).toFixed(1));

const root = mkdtempSync(join(tmpdir(), "sg-newcomer-"));
const clone = join(root, "stablegate");
const dataDir = join(root, "data");
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
// A newcomer's shell: none of this machine's service settings, the defaults of `npm start`.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|REDIS_URL|NODE_ENV|PUBLIC_URL|CHAIN_|RUN_WORKER|LOG_LEVEL)/.test(k)),
);
Object.assign(env, { DATA_DIR: dataDir, PORT: String(port) });
let server = null;

/** Runs `npm start` in the clone (its own process group, so the signal reaches node under npm); returns it with its output. */
function npmStart() {
  const child = spawn("npm", ["start"], { cwd: clone, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => r(code ?? signal)));
  return { child, output: () => out, exited };
}

/** Ms from `since` until GET `path` answers 200 (3 minutes at most). */
async function until(path, since, service) {
  for (;;) {
    try {
      if ((await fetch(`${url}${path}`)).ok) return Date.now() - since;
    } catch {}
    if (service.child.exitCode !== null) throw new Error(`npm start exited:\n${service.output().slice(-3000)}`);
    if (Date.now() - since > 180_000) throw new Error(`${path} never answered:\n${service.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGTERM to npm and the service under it; resolves once both exited and the port answers no more. */
async function stop(service) {
  process.kill(-service.child.pid, "SIGTERM");
  await service.exited;
  for (;;) {
    try {
      await fetch(`${url}/healthz`);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts npm start and times it: healthz answering, readyz ready. */
async function timedStart() {
  const began = Date.now();
  server = npmStart();
  const health = await until("/healthz", began, server);
  const ready = await until("/readyz", began, server);
  return { began, health, ready };
}

try {
  let t = Date.now();
  execFileSync("git", ["clone", "--quiet", "--no-checkout", repo, clone], { stdio: "inherit" });
  execFileSync("git", ["checkout", "--quiet", rev], { cwd: clone, stdio: "inherit" });
  const cloneMs = Date.now() - t;
  log(`cloned ${repo} at ${execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: clone, encoding: "utf8" }).trim()} in ${seconds(cloneMs)} s`);
  t = Date.now();
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: clone, env, stdio: ["ignore", "ignore", "inherit"] });
  const installMs = Date.now() - t;
  log(`npm ci (with its build) in ${seconds(installMs)} s`);

  const first = await timedStart();
  // The banner follows the listen: wait for the key it prints.
  let key = null;
  while (!(key = /Test API key \(shown once, keep it\): (sk_test_\w+)/.exec(server.output())?.[1])) await new Promise((r) => setTimeout(r, 50));
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const created = await fetch(`${url}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "newcomer-1", amount: "25" }) });
  const charge = await created.json();
  if (created.status !== 201) throw new Error(`creating a charge: HTTP ${created.status} ${JSON.stringify(charge)}`);
  execFileSync("npx", ["stablegate", "devnet", "pay", charge.id], { cwd: clone, env, stdio: ["ignore", "ignore", "inherit"] });
  let status = charge.status;
  while (status !== "COMPLETED") {
    if (Date.now() - first.began > 300_000) throw new Error(`charge ${charge.id} still ${status}`);
    await new Promise((r) => setTimeout(r, 100));
    status = (await (await fetch(`${url}/v1/charges/${charge.id}`, { headers })).json()).status;
  }
  const paidMs = Date.now() - first.began;
  await stop(server);

  const second = await timedStart();
  await stop(server);
  server = null;

  const rows = [
    ["git clone", cloneMs],
    ["npm ci (network and disk bound; builds once)", installMs],
    ["first npm start: /healthz answers", first.health],
    ["first npm start: /readyz ready", first.ready],
    ["first npm start: first devnet charge COMPLETED", paidMs],
    ["second npm start: /healthz answers", second.health],
    ["second npm start: /readyz ready", second.ready],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, ms] of rows) log(`${name.padEnd(width)}  ${seconds(ms).toFixed(1).padStart(6)} s`);
  console.log(
    JSON.stringify({
      bench: "newcomer: clone, install, first start, first devnet charge, second start (seconds)",
      clone: seconds(cloneMs),
      install: seconds(installMs),
      firstStart: { health: seconds(first.health), ready: seconds(first.ready), chargeCompleted: seconds(paidMs) },
      secondStart: { health: seconds(second.health), ready: seconds(second.ready) },
    }),
  );
} finally {
  if (server && server.child.exitCode === null) await stop(server).catch(() => {});
  rmSync(root, { recursive: true, force: true });
}
