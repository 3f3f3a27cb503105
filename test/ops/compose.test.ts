// docker-compose.yml with docker-compose.devnet.yml over it, run here without Docker: each service's
// command goes through the image's entrypoint (.docker/entrypoint.sh) with that service's environment
// as the files give it (anchors, env_file and ${…} interpolation from .env.example, the override's
// additions), its secrets as files, the host names mapped to this machine (postgres, redis → the
// local PostgreSQL and Redis; anvil → an anvil from the npm package on loopback) and the volumes to
// temporary folders. migrate and the devnet setup exit 0, two API replicas and a worker come up in
// the order the files say, a charge made on the first API is paid on the devnet and seen COMPLETED
// live on the second, /metrics parses, and SIGTERM stops each process with exit code 0 within 10 s,
// under load, with no request cut off. Without the override nothing reads the devnet's settings, and
// with it they never override the environment.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import parsePrometheus from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Wallet } from "ethers";
import { parse as parseYaml } from "yaml";
import { waitFor } from "../helpers/chain.js";
import { freshDatabase, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";
import { startReceiver } from "../helpers/receiver.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { ANSWERED_OR_REFUSED, steadyLoad } from "../helpers/steady-load.js";

const run = promisify(execFile);
const ENTRYPOINT = ".docker/entrypoint.sh";

interface Service {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number | boolean>;
  env_file?: string | string[];
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  secrets?: string[];
  volumes?: string[];
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

type Compose = { services: Record<string, Service>; secrets?: Record<string, { file: string }> };
const text = readFileSync("docker-compose.yml", "utf8");
const production = parseYaml(text, { merge: true }) as Compose;
const devnetFile = parseYaml(readFileSync("docker-compose.devnet.yml", "utf8"), { merge: true }) as Compose;
const envFile = dotEnv(readFileSync(".env.example", "utf8"));

/** `override` over `base` as Compose merges files: maps merge, lists add up, anything else is replaced. */
function mergeCompose(base: Compose, override: Compose): Compose {
  const services: Record<string, Service> = { ...base.services };
  for (const [name, extra] of Object.entries(override.services)) {
    const merged: Record<string, unknown> = { ...services[name] };
    for (const [key, value] of Object.entries(extra)) {
      const old = merged[key];
      if (Array.isArray(old) && Array.isArray(value)) merged[key] = [...old, ...value];
      else if (old && typeof old === "object" && value && typeof value === "object") merged[key] = { ...old, ...value };
      else merged[key] = value;
    }
    services[name] = merged as Service;
  }
  return { ...base, services };
}
const compose = mergeCompose(production, devnetFile);

describe("docker-compose.yml", () => {
  it("has the services and the start order the deployment needs, and only the front door publishes ports", () => {
    const s = production.services;
    expect(Object.keys(s).sort()).toEqual(["api-1", "api-2", "migrate", "postgres", "proxy", "redis", "worker"]);
    for (const name of ["api-1", "api-2", "worker"]) {
      expect(s[name]!.depends_on).toMatchObject({ migrate: { condition: "service_completed_successfully" }, redis: { condition: "service_healthy" } });
      // `migrate` is the only migrator.
      expect(s[name]!.environment?.AUTO_MIGRATE).toBe("false");
    }
    expect(s.migrate!.depends_on).toMatchObject({ postgres: { condition: "service_healthy" } });
    for (const name of ["api-1", "api-2"]) {
      expect(s[name]!.environment).toMatchObject({ RUN_WORKER: "false", TRUST_PROXY: "1", SHUTDOWN_DELAY_MS: "5000" });
    }
    expect(Object.entries(s).filter(([, service]) => service.ports)).toEqual([["proxy", expect.anything()]]);
    expect(interpolate(String(s["api-1"]!.environment!.PUBLIC_URL), { SITE_ADDRESS: "pay.example" })).toBe("https://pay.example");
    // The proxy sends to each replica by name, taking one out while its /readyz fails.
    const caddyfile = readFileSync(".docker/Caddyfile", "utf8");
    expect(caddyfile).toMatch(/reverse_proxy api-1:4000 api-2:4000 \{/);
    expect(caddyfile).toMatch(/health_uri \/readyz/);
    expect(caddyfile).toMatch(/Strict-Transport-Security/);
  });

  it("gives each secret to the containers that need it, as a file, and keeps them out of .env", () => {
    const s = production.services;
    expect(Object.keys(production.secrets ?? {}).sort()).toEqual(["metrics_token", "postgres_password", "relayer_key"]);
    // Only the worker sends transactions, so only it holds the relayer key.
    for (const [name, service] of Object.entries(s)) expect(service.secrets?.includes("relayer_key") ?? false, name).toBe(name === "worker");
    expect(s.worker!.environment?.RELAYER_PRIVATE_KEY_FILE).toBe("/run/secrets/relayer_key");
    expect(s.postgres!.environment?.POSTGRES_PASSWORD_FILE).toBe("/run/secrets/postgres_password");
    // No secret in the files: not in docker-compose.yml, not set in .env.example (which every container reads).
    expect(text).not.toMatch(/PASSWORD:\s*\$\{|RELAYER_PRIVATE_KEY:/);
    for (const name of ["POSTGRES_PASSWORD", "DATABASE_PASSWORD", "RELAYER_PRIVATE_KEY", "METRICS_TOKEN"]) expect(envFile[name], name).toBeUndefined();
    expect(readFileSync(".gitignore", "utf8")).toMatch(/^\.env$/m);
    expect(readFileSync(".gitignore", "utf8")).toMatch(/^secrets\/$/m);
  });

  it("keeps the devnet apart: only docker-compose.devnet.yml has anvil, its setup and the settings file it writes", () => {
    // Its comments may point to the devnet file; nothing it runs or sets may.
    expect(text.replace(/#.*$/gm, "")).not.toMatch(/anvil|devnet|SETTINGS_FILE/);
    expect(Object.keys(devnetFile.services).sort()).toEqual(["anvil", "api-1", "api-2", "devnet-setup", "mailpit", "migrate", "worker"]);
    for (const name of ["api-1", "api-2", "worker", "migrate"]) {
      expect(compose.services[name]!.environment?.SETTINGS_FILE).toBe("/shared/devnet.env");
      expect(compose.services[name]!.depends_on).toMatchObject({ "devnet-setup": { condition: "service_completed_successfully" } });
      // Every email of the devnet stack goes to Mailpit (its page on this machine's port 8025), never out.
      expect(compose.services[name]!.environment?.SMTP_URL).toBe("smtp://mailpit:1025");
    }
    expect(devnetFile.services.mailpit).toMatchObject({ image: "axllent/mailpit", ports: ["127.0.0.1:8025:8025"] });
    expect(production.services.worker!.environment?.SMTP_URL).toBeUndefined();
  });

  it("a settings file only fills what the environment leaves unset", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sg-settings-"));
    try {
      const settings = join(dir, "devnet.env");
      writeFileSync(settings, "LOG_LEVEL=not-a-level\n");
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: join(dir, "data"), SETTINGS_FILE: settings };
      // Set in the environment: the file's line is ignored and migrate succeeds.
      const ok = await run(ENTRYPOINT, ["migrate"], { env: { ...env, LOG_LEVEL: "silent" } });
      expect(ok.stdout).toMatch(/applied|up to date/i);
      // Unset: the file fills it in (and here it is wrong, which the error says).
      const failed = await run(ENTRYPOINT, ["migrate"], { env }).then(
        () => null,
        (e: { stderr: string }) => e.stderr,
      );
      expect(failed).toMatch(/LOG_LEVEL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("names every setting the service reads in .env.example", async () => {
    const { configVariables } = await import("../../src/config.js");
    const example = readFileSync(".env.example", "utf8");
    for (const name of configVariables()) expect(example, name).toMatch(new RegExp(`\\b${name}=`));
  });
});

describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)("docker-compose.yml with the devnet file, its services run on this machine", () => {
  let shared: string;
  let secrets: string;
  const metricsToken = `metrics-${Math.random().toString(36).slice(2)}-token`;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let anvilPort: number;
  /** Stands for Mailpit. */
  let smtp: TestSmtp;
  const running = new Set<ChildProcess>();

  /** A service's environment as Compose would give it, with host names and the shared volume mapped here. */
  function environmentOf(name: string): NodeJS.ProcessEnv {
    const service = compose.services[name]!;
    const fromFile = service.env_file ? envFile : {};
    const env: Record<string, string> = { ...fromFile };
    for (const [k, v] of Object.entries(service.environment ?? {})) env[k] = interpolate(String(v), envFile);
    for (const [k, v] of Object.entries(env)) env[k] = here(v);
    // Compose mounts only the secrets a service names.
    for (const [k, v] of Object.entries(env)) {
      const secret = /^\/run\/secrets\/(\w+)$/.exec(v)?.[1];
      if (secret) {
        expect(service.secrets ?? [], `${name} reads ${secret}`).toContain(secret);
        env[k] = join(secrets, secret);
      }
    }
    // The file points at its own containers; here they are the local servers (the devnet setup uses neither).
    if (name !== "devnet-setup") {
      expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      env.DATABASE_URL = database.url!;
      env.REDIS_URL = process.env.REDIS_URL!;
    }
    // Every test file calls from 127.0.0.1 and shares Redis's counters: per-address limits off here.
    return { PATH: process.env.PATH, HOME: process.env.HOME, ...env, PORT: "0", WORKER_PORT: "0", HOST: "127.0.0.1", ...UNLIMITED_ADDRESS };
  }

  /** A path or URL inside the containers as it is here. */
  function here(v: string): string {
    return v
      .replaceAll("/shared", shared)
      .replace(/^\/data$/, join(shared, "data"))
      .replaceAll("//anvil:8545", `//127.0.0.1:${anvilPort}`)
      .replaceAll("//mailpit:1025", `//127.0.0.1:${smtp.port}`);
  }

  function argsOf(name: string): string[] {
    return (compose.services[name]!.command ?? []).map(here);
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
    secrets = join(shared, "secrets");
    mkdirSync(secrets);
    // The local PostgreSQL trusts loopback: any password is accepted, the point is that it is read from its file.
    writeFileSync(join(secrets, "postgres_password"), "compose-password\n");
    writeFileSync(join(secrets, "relayer_key"), `${Wallet.createRandom().privateKey}\n`);
    writeFileSync(join(secrets, "metrics_token"), `${metricsToken}\n`);
    database = await freshDatabase();
    smtp = await startSmtp();
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
    await smtp?.stop();
    rmSync(shared, { recursive: true, force: true });
  });

  it("migrates, sets up the devnet, runs two APIs and a worker; a payment is seen live on the other API and its webhook sent; SIGTERM under load loses no request", async () => {
    await oneShot("migrate");
    expect(await oneShot("devnet-setup")).toMatch(/Devnet ready/);
    expect(readFileSync(join(shared, "devnet.env"), "utf8")).toMatch(/^CHAIN_31337_FACTORY=0x/m);

    const apis = ["api-1", "api-2"].map((name) => startService(name));
    const worker = startService("worker");
    const [first, second] = await Promise.all(apis.map((a) => a.ready));
    const workerUrl = await worker.ready;
    // pg_stat_activity and the server's logs name each process's connections; each log line names its process.
    const names = await database.db.prisma.$queryRaw<{ name: string }[]>`
      SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'stablegate%'`;
    const apps = [...new Set(names.map((n) => n.name.replace(/ .*/, "")))].sort();
    expect(apps).toEqual(["stablegate", "stablegate-worker"]);
    expect(names.length).toBeGreaterThanOrEqual(3);
    for (const p of [...apis, worker]) expect(p.output()).toMatch(/"instance":"[^"]+"/);
    // Mailpit (here a test SMTP server) is every process's SMTP_URL.
    for (const base of [first!, workerUrl]) expect((await (await fetch(`${base}/readyz`)).json()).email).toBe("configured");

    const created = JSON.parse(await oneShot("api-1", ["merchant", "create", "--name", "Compose Shop", "--test-wallet", WALLET, "--json"]));
    const key = created.apiKeys.test.secret as string;
    const receiver = await startReceiver();
    await oneShot("api-1", ["webhooks", "create", created.merchant.id, "--mode", "test", "--url", receiver.url, "--json"]);
    const headers = { "x-api-key": key, "content-type": "application/json" };
    const charge = await (
      await fetch(`${first}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "compose-1", amount: "12.50" }) })
    ).json();
    expect(charge.status).toBe("PENDING");

    const client = wsClient(second!, key);
    const updates = subscribe(client, `subscription($id: ID!) { chargeUpdated(id: $id) { status amountReceived } }`, { id: charge.id });
    await updates.waitFor(1);
    const paid = await oneShot("api-1", ["devnet", "pay", charge.id], { PUBLIC_URL: first! });
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

    const scrape = async (base: string) =>
      parsePrometheus(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text());
    const sample = (metrics: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string> = {}) =>
      metrics.find((m) => m.name === name)?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
    // What is read from the database is reported once, by the worker: sum() over processes must not overcount.
    for (const base of [first!, second!]) expect((await scrape(base)).find((m) => m.name === "stablegate_relayer_balance_wei")).toBeUndefined();
    {
      const metrics = await scrape(workerUrl);
      const chain = (name: string) => sample(metrics, name, { chain_id: "31337" });
      expect(chain("stablegate_relayer_balance_wei")).toBeDefined();
      const indexed = Number(chain("stablegate_chain_indexed_block")?.value);
      expect(indexed).toBeGreaterThan(0);
      const head = Number(chain("stablegate_chain_head_block")?.value);
      expect(head).toBeGreaterThanOrEqual(indexed);
      // One scrape reads both: the lag is their difference.
      expect(Number(chain("stablegate_chain_lag_blocks")?.value)).toBe(head - indexed);
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
    await waitFor("the load under way", async () => [...load.outcomes.values()].reduce((a, b) => a + b, 0) >= 16);
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
