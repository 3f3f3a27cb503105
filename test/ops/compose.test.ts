// docker-compose.yml, run here without Docker: each service's command goes through the image's
// entrypoint (.docker/entrypoint.sh) with that service's environment as the file gives it (anchors,
// env_file and ${…} interpolation from .env.example), the host names mapped to this machine
// (postgres, redis → the local PostgreSQL and Redis; anvil → an anvil from the npm package on
// loopback) and the shared volume to a temporary folder. migrate and the devnet setup exit 0, two
// API replicas and a worker come up in the order the file says, a charge made on the first API is
// paid on the devnet and seen COMPLETED live on the second, /metrics parses, and SIGTERM stops each
// process with exit code 0 within 10 s, under load, with no request cut off.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import parsePrometheus from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { waitFor } from "../helpers/chain.js";
import { freshDatabase, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";
import { startReceiver } from "../helpers/receiver.js";
import { ANSWERED_OR_REFUSED, steadyLoad } from "../helpers/steady-load.js";

const run = promisify(execFile);
const ENTRYPOINT = ".docker/entrypoint.sh";

interface Service {
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number | boolean>;
  env_file?: string | string[];
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
  deploy?: { replicas?: number };
}

/** The variables .env.example sets (its uncommented KEY=VALUE lines): what a fresh `cp .env.example .env` gives. */
function dotEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} against `vars`; a missing required variable throws. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v !== undefined && v !== "") return v;
    if (op === "?") throw new Error(`docker-compose.yml needs ${name}: ${arg}`);
    return op === "-" ? (arg ?? "") : "";
  });
}

const text = readFileSync("docker-compose.yml", "utf8");
const compose = parseYaml(text, { merge: true }) as { services: Record<string, Service> };
const envFile = dotEnv(readFileSync(".env.example", "utf8"));

describe("docker-compose.yml", () => {
  it("has the services and the start order the deployment needs", () => {
    const s = compose.services;
    expect(Object.keys(s)).toEqual(expect.arrayContaining(["postgres", "redis", "migrate", "devnet-setup", "api", "worker", "anvil"]));
    for (const name of ["api", "worker"]) {
      expect(s[name]!.depends_on).toMatchObject({
        migrate: { condition: "service_completed_successfully" },
        "devnet-setup": { condition: "service_completed_successfully" },
        redis: { condition: "service_healthy" },
      });
    }
    expect(s.migrate!.depends_on).toMatchObject({ postgres: { condition: "service_healthy" } });
    expect(s.api!.deploy?.replicas).toBe(2);
    expect(s.api!.environment?.RUN_WORKER).toBe("false");
    expect(s.anvil!.profiles).toEqual(["devnet"]);
    // No secret in the file: the database password comes from .env, which is not committed.
    expect(text).not.toMatch(/^\s*POSTGRES_PASSWORD:\s*[^$\s]/m);
    expect(readFileSync(".gitignore", "utf8")).toMatch(/^\.env$/m);
  });

  it("names every setting the service reads in .env.example", async () => {
    const { configVariables } = await import("../../src/config.js");
    const example = readFileSync(".env.example", "utf8");
    for (const name of configVariables()) expect(example, name).toMatch(new RegExp(`\\b${name}=`));
  });
});

describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)("docker-compose.yml, its services run on this machine", () => {
  let shared: string;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let anvilPort: number;
  const running = new Set<ChildProcess>();

  /** A service's environment as Compose would give it, with host names and the shared volume mapped here. */
  function environmentOf(name: string): NodeJS.ProcessEnv {
    const service = compose.services[name]!;
    const fromFile = service.env_file ? envFile : {};
    const env: Record<string, string> = { ...fromFile };
    for (const [k, v] of Object.entries(service.environment ?? {})) env[k] = interpolate(String(v), envFile);
    const here = (v: string) => v.replaceAll("/shared", shared).replaceAll("//anvil:8545", `//127.0.0.1:${anvilPort}`);
    for (const [k, v] of Object.entries(env)) env[k] = here(v);
    // The file points at its own containers; here they are the local servers.
    expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(env.REDIS_URL).toBe("redis://redis:6379");
    env.DATABASE_URL = database.url!;
    env.REDIS_URL = process.env.REDIS_URL!;
    // Every test file calls from 127.0.0.1 and shares Redis's counters: per-address limits off here.
    return { PATH: process.env.PATH, HOME: process.env.HOME, ...env, PORT: "0", WORKER_PORT: "0", HOST: "127.0.0.1", ...UNLIMITED_ADDRESS };
  }

  function argsOf(name: string): string[] {
    return (compose.services[name]!.command ?? []).map((a) => a.replaceAll("/shared", shared).replaceAll("//anvil:8545", `//127.0.0.1:${anvilPort}`));
  }

  /** Starts a long-running service; resolves with its base URL once it listens. */
  function startService(name: string, extraEnv: Record<string, string> = {}): { child: ChildProcess; ready: Promise<string>; output: () => string } {
    const child = spawn(ENTRYPOINT, argsOf(name), { env: { ...environmentOf(name), ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    child.on("exit", () => running.delete(child));
    let out = "";
    const ready = new Promise<string>((resolve, reject) => {
      const look = (d: Buffer) => {
        out += d;
        const listening = /"url":"(http:\/\/[^"]+)".*stablegate (listening|worker running)/.exec(out);
        if (listening) resolve(listening[1]!);
      };
      child.stdout!.on("data", look);
      child.stderr!.on("data", look);
      child.on("exit", (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${out.slice(-3000)}`)));
    });
    return { child, ready, output: () => out };
  }

  async function oneShot(name: string, args = argsOf(name), extraEnv: Record<string, string> = {}): Promise<string> {
    const { stdout } = await run(ENTRYPOINT, args, { env: { ...environmentOf(name), ...extraEnv }, timeout: 120_000 });
    return stdout;
  }

  async function stop(child: ChildProcess): Promise<{ code: number | null; ms: number }> {
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    return { code: await exited, ms: Date.now() - started };
  }

  beforeAll(async () => {
    shared = mkdtempSync(join(tmpdir(), "sg-compose-"));
    database = await freshDatabase();
    // The devnet profile's anvil, from its own entry in the file, on a free loopback port.
    const anvil = compose.services.anvil!;
    anvilPort = 20_000 + Math.floor(Math.random() * 20_000);
    const args = (anvil.command ?? []).map((a) => (a === "0.0.0.0" ? "127.0.0.1" : a === "8545" ? String(anvilPort) : a.replaceAll("/shared", shared)));
    const child = spawn(anvil.entrypoint![0]!, args, { stdio: "ignore" });
    running.add(child);
  }, 60_000);

  afterAll(async () => {
    for (const child of running) child.kill("SIGKILL");
    await database?.drop();
    rmSync(shared, { recursive: true, force: true });
  });

  it("migrates, sets up the devnet, runs two APIs and a worker; a payment is seen live on the other API and its webhook sent; SIGTERM under load loses no request", async () => {
    await oneShot("migrate");
    expect(await oneShot("devnet-setup")).toMatch(/Devnet ready/);
    expect(readFileSync(join(shared, "devnet.env"), "utf8")).toMatch(/^CHAIN_31337_FACTORY=0x/m);

    const replicas = compose.services.api!.deploy?.replicas ?? 1;
    const apis = Array.from({ length: replicas }, () => startService("api"));
    const worker = startService("worker");
    const [first, second] = await Promise.all(apis.map((a) => a.ready));
    const workerUrl = await worker.ready;

    const created = JSON.parse(await oneShot("api", ["merchant", "create", "--name", "Compose Shop", "--test-wallet", WALLET, "--json"]));
    const key = created.apiKeys.test.secret as string;
    const receiver = await startReceiver();
    await oneShot("api", ["webhooks", "create", created.merchant.id, "--mode", "test", "--url", receiver.url, "--json"]);
    const headers = { "x-api-key": key, "content-type": "application/json" };
    const charge = await (
      await fetch(`${first}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "compose-1", amount: "12.50" }) })
    ).json();
    expect(charge.status).toBe("PENDING");

    const client = wsClient(second!, key);
    const updates = subscribe(client, `subscription($id: ID!) { chargeUpdated(id: $id) { status amountReceived } }`, { id: charge.id });
    await updates.waitFor(1);
    const paid = await oneShot("api", ["devnet", "pay", charge.id], { PUBLIC_URL: first! });
    expect(paid).toMatch(/Paid 12.50 USDC/);
    await waitFor("COMPLETED on the second API", async () => updates.values.some((v) => v.chargeUpdated.status === "COMPLETED"), 90_000);
    expect(updates.values.at(-1)?.chargeUpdated).toEqual({ status: "COMPLETED", amountReceived: "12.50" });
    await client.dispose();
    await waitFor(
      "charge.completed delivered by the worker",
      async () => receiver.received.some((r) => JSON.parse(r.body).type === "charge.completed"),
      30_000,
    );
    await receiver.close();

    const scrape = async (base: string) => parsePrometheus(await (await fetch(`${base}/metrics`)).text());
    const sample = (metrics: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string> = {}) =>
      metrics.find((m) => m.name === name)?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
    for (const base of [first!, second!, workerUrl]) {
      const metrics = await scrape(base);
      const chain = (name: string) => sample(metrics, name, { chain_id: "31337" });
      expect(chain("stablegate_relayer_balance_wei")).toBeDefined();
      const indexed = Number(chain("stablegate_chain_indexed_block")?.value);
      expect(indexed).toBeGreaterThan(0);
      expect(Number(chain("stablegate_chain_head_block")?.value)).toBeGreaterThanOrEqual(indexed);
      expect(Number(chain("stablegate_chain_lag_blocks")?.value)).toBeGreaterThanOrEqual(0);
      // The payment is done: nothing open, nothing left to deploy.
      expect(metrics.find((m) => m.name === "stablegate_charges_open")?.metrics ?? []).toEqual([]);
      expect(metrics.find((m) => m.name === "stablegate_deployments_unmined")?.metrics ?? []).toEqual([]);
    }
    // Each process counts its own: the charge was made on the first API, the webhooks sent by the worker.
    const chargesCreated = async (base: string) => sample(await scrape(base), "stablegate_http_requests_total", { route: "/v1/charges", status: "201" })?.value;
    expect(await chargesCreated(first!)).toBe("1");
    expect(await chargesCreated(second!)).toBeUndefined();
    const delivered = async (base: string) => Number(sample(await scrape(base), "stablegate_webhook_deliveries_total", { result: "succeeded" })?.value ?? 0);
    expect(await delivered(workerUrl)).toBeGreaterThanOrEqual(1);
    expect(await delivered(first!)).toBe(0);

    // SIGTERM while requests keep coming: each is answered (200, or 503 "shutting down: retry"
    // for one that reached a closing process) or refused before it was accepted; none is cut off.
    const load = steadyLoad(`${first}/v1/charges/${charge.id}`, { "x-api-key": key });
    await new Promise((r) => setTimeout(r, 300));
    const { code, ms } = await stop(apis[0]!.child);
    await load.stop();
    expect(code, apis[0]!.output().slice(-2000)).toBe(0);
    expect(ms).toBeLessThan(10_000);
    const lost = [...load.outcomes].filter(([outcome]) => !ANSWERED_OR_REFUSED.includes(outcome));
    expect(lost, JSON.stringify([...load.outcomes])).toEqual([]);
    expect(load.outcomes.get("200")).toBeGreaterThan(0);

    for (const p of [apis[1]!, worker]) {
      const { code, ms } = await stop(p.child);
      expect(code, p.output().slice(-2000)).toBe(0);
      expect(ms).toBeLessThan(10_000);
    }
  }, 240_000);
});
