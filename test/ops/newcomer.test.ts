// The newcomer's path: `npm start` on an empty data dir prints a key and a curl that works; the
// settings command refuses to open the embedded database while the server holds it.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), "sg-newcomer-"));
const env = { ...process.env, DATA_DIR: dataDir, PORT: "0", WORKER_PORT: "0", DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "info" };
/**
 * How long a start may take: a cold start (embedded database created, migrations applied, demo
 * seeded) takes about 26 s on a loaded 2-CPU host, so the margin is wide; past it, the host is slow.
 */
const START_MS = 90_000;
let server: ChildProcess | undefined;

/** Sends SIGTERM and resolves with the exit code once `child` has exited (at once if it already has). */
function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  child.kill("SIGTERM");
  return exited;
}

// A test that failed half-way must not leave its server holding the embedded database: the next
// test would then fail on "in use by another Stablegate process" instead of on what went wrong.
afterEach(async () => {
  if (server) await stop(server);
  server = undefined;
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** Resolves once `output()` matches `pattern`; fails after `ms`, saying what was slow and what the process printed. */
async function waitForOutput(output: () => string, pattern: RegExp, ms: number, what: string): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = pattern.exec(output());
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`${what} took over ${ms / 1000} s (host overloaded?); its output:\n${output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startServer(extraEnv: Record<string, string> = {}): Promise<{ output: () => string; url: string }> {
  const child = spawn(process.execPath, ["dist/main.js"], { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  server = child;
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`server exited ${code} before it listened:\n${out}`))));
  const started = waitForOutput(() => out, /"url":"(http:[^"]+)"/, START_MS, "the server's start (no listening URL logged)");
  // Whichever loses the race settles later, unheard.
  for (const p of [started, exited]) p.catch(() => {});
  const m = await Promise.race([started, exited]);
  return { output: () => out, url: m[1]! };
}

describe("npm start on an empty data dir", () => {
  it("seeds a demo merchant, prints a working curl, and blocks the CLI while running", async () => {
    const { output, url } = await startServer();
    const text = output();
    expect(text).toMatch(/Demo merchant created: mer_/);
    const key = /sk_test_[0-9A-Za-z]{32}/.exec(text)?.[0];
    expect(key).toBeDefined();
    // Run the printed curl against the real port (PORT=0 picked a free one).
    const curl = text
      .split("\n")
      .filter((l) => l.includes("curl") || l.includes("-d '"))
      .join("\n");
    const printed = curl.replace(/\\\n\s*/g, "").replace(/http:\/\/localhost:\d+/, url);
    const args = printed
      .replace(/^\s*curl\s+/, "")
      .match(/'[^']*'|\S+/g)!
      .map((a) => a.replace(/^'|'$/g, ""));
    const { stdout } = await run("curl", args);
    expect(JSON.parse(stdout)).toMatchObject({ object: "customer", email: "jane@example.com" });
    // The demo user's printed password opens the dashboard.
    const [, email, password] = /Dashboard sign-in \(shown once\): (\S+) \/ (\S+)/.exec(text)!;
    const signIn = await fetch(`${url}/dashboard/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    expect(signIn.status).toBe(201);

    const cli = await run(process.execPath, ["dist/cli/main.js", "merchant", "show", "mer_x"], { env }).catch((e) => e);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/in use by another Stablegate process/);

    expect(await stop(server!)).toBe(0);
    server = undefined;
  }, 180_000); // a start, then CLI runs that each open the embedded database

  it("manages merchants and keys with the stablegate command once the server is stopped", async () => {
    const create = await run(
      process.execPath,
      ["dist/cli/main.js", "merchant", "create", "--name", "Acme", "--fee-bps", "50", "--test-wallet", "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", "--json"],
      { env },
    );
    const created = JSON.parse(create.stdout);
    expect(created.merchant).toMatchObject({ name: "Acme", feeBps: 50, testWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });
    expect(created.apiKeys.live.secret).toMatch(/^sk_live_/);
    const bad = await run(
      process.execPath,
      ["dist/cli/main.js", "merchant", "update", created.merchant.id, "--live-wallet", "0x70997970C51812dc3A010C7d01b50e0d17dc79c8"],
      { env },
    ).catch((e) => e);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not a valid checksummed EVM address.*--live-wallet/);
    const key = JSON.parse(
      (await run(process.execPath, ["dist/cli/main.js", "keys", "create", created.merchant.id, "--mode", "test", "--json"], { env })).stdout,
    );
    const rolled = (await run(process.execPath, ["dist/cli/main.js", "keys", "roll", key.id, "--overlap-hours", "0"], { env })).stdout;
    expect(rolled).toMatch(new RegExp(`^sk_test_\\w+\\s+\\(key_\\w+; shown once\\)\n${key.id} stops working at `));
    await run(process.execPath, ["dist/cli/main.js", "keys", "revoke", key.id], { env });
    const shown = (await run(process.execPath, ["dist/cli/main.js", "merchant", "show", created.merchant.id], { env })).stdout;
    expect(shown).toMatch(new RegExp(`${key.id}\\s+sk_test_…${key.secret.slice(-4)} revoked`));
    const cli = (...args: string[]) => run(process.execPath, ["dist/cli/main.js", ...args], { env });
    const fenced = (await cli("keys", "create", created.merchant.id, "--mode", "test", "--ip-allowlist", "203.0.113.0/24, 2001:DB8::/32")).stdout;
    expect(fenced).toMatch(/sk_test_\w+\s+\(key_\w+; only from 203\.0\.113\.0\/24, 2001:db8::\/32; shown once\)/);
    const hook = (await cli("webhooks", "create", created.merchant.id, "--mode", "test", "--url", "http://localhost:3000/hooks")).stdout;
    expect(hook).toMatch(
      /whep_\w{24}\s+test\s+http:\/\/localhost:3000\/hooks\s+all events\s+enabled\n\s+signing secret \(shown once\): whsec_[A-Za-z0-9+/]{43}=/,
    );
    const refused = await cli("webhooks", "create", created.merchant.id, "--mode", "live", "--url", "https://10.0.0.1/hooks").catch((e) => e);
    expect(refused.stderr).toMatch(/10\.0\.0\.1 resolves to 10\.0\.0\.1, a private.*\(--url\)/);
    expect((await cli("webhooks", "list", created.merchant.id)).stdout).not.toMatch(/whsec_/);
    // The same domain code as /v1/webhook_endpoints (tested there in full): update, pause, rotate, delete by id.
    const whep = /(whep_\w{24})/.exec(hook)![1]!;
    expect((await cli("webhooks", "update", whep, "--events", "charge.completed")).stdout).toMatch(/charge\.completed\s+enabled/);
    expect((await cli("webhooks", "disable", whep)).stdout).toMatch(/disabled \(disabled by the merchant\)/);
    const badOverlap = await cli("webhooks", "rotate", whep, "--overlap-hours", "999").catch((e) => e);
    expect(badOverlap.stderr).toMatch(/must be an integer between 0 and 168 \(--overlap-hours\)/);
    expect((await cli("webhooks", "delete", whep)).stdout).toMatch(`Deleted ${whep}.`);

    // Restarting keeps the data and seeds nothing new; the revoked key no longer works.
    const { output, url } = await startServer();
    expect(output()).not.toMatch(/Demo merchant created/);
    const res = await fetch(`${url}/v1/customers`, { headers: { "x-api-key": key.secret } });
    expect(res.status).toBe(401);
    // The fenced key refuses this address (127.0.0.1).
    const elsewhere = await fetch(`${url}/v1/customers`, { headers: { "x-api-key": /(sk_test_\w+)/.exec(fenced)![1]! } });
    expect(elsewhere.status).toBe(401);
    expect((await elsewhere.json()).code).toBe("api_key_ip_not_allowed");
    const ok = await fetch(`${url}/v1/customers?email=jane@example.com`, { headers: { "x-api-key": created.apiKeys.test.secret } });
    expect((await ok.json()).data).toEqual([]);
  }, 300_000); // a dozen CLI runs, each opening the embedded database, and a restart: slow on a loaded host (over 180 s seen)
});

describe("npm run worker", () => {
  it("runs the background jobs on the same database and stops cleanly on SIGTERM", async () => {
    const worker = spawn(process.execPath, ["dist/worker.js"], { env, stdio: ["ignore", "pipe", "pipe"] });
    server = worker;
    let out = "";
    worker.stdout.on("data", (d) => (out += d));
    worker.stderr.on("data", (d) => (out += d));
    const running = await waitForOutput(() => out, /^.*stablegate worker running.*$/m, START_MS, "the worker's start");
    expect(running[0]).toContain('"database":"embedded"');
    expect(await stop(worker)).toBe(0);
  }, 120_000);
});

describe("npm start's local devnet", () => {
  it("takes a test payment end to end: create a charge, stablegate devnet pay, the charge completes; devnet refund pays a refund back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sg-devnet-"));
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const devEnv = { ...env, NODE_ENV: "development", DATA_DIR: dir, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
    const child = spawn(process.execPath, ["dist/main.js"], { env: devEnv, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on("exit", r));
    try {
      // The banner is written synchronously, the log line asynchronously: wait for both.
      await waitForOutput(() => out, /stablegate devnet pay/, START_MS, "the devnet's start (no banner)");
      expect((await waitForOutput(() => out, /"chains":\[[^\]]*\]/, START_MS, "the devnet's start (no chains logged)"))[0]).toBe('"chains":[31337]');
      const key = /sk_test_[0-9A-Za-z]{32}/.exec(out)![0];
      const headers = { "x-api-key": key, "content-type": "application/json" };
      const charge = await (
        await fetch(`${devEnv.PUBLIC_URL}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "e2e", amount: "12.5" }) })
      ).json();
      const paid = await run(process.execPath, ["dist/cli/main.js", "devnet", "pay", charge.id], { env: devEnv });
      expect(paid.stdout).toMatch(/^Paid 12\.50 USDC to 0x[0-9a-fA-F]{40} from 0x90F79bf6EB2c4f870365E785982E1f101E93b906/);
      // The worker inside npm start sees the payment, flushes the clone and completes the charge.
      let done: { status: string; deployedAt: string | null; netAmount: string | null } | undefined;
      for (let i = 0; i < 200 && done?.status !== "COMPLETED"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        done = await (await fetch(`${devEnv.PUBLIC_URL}/v1/charges/${charge.id}`, { headers })).json();
      }
      expect(done).toMatchObject({ status: "COMPLETED", netAmount: "12.375" });
      expect(done!.deployedAt).not.toBeNull();
      // A refund to a buyer's address, paid from the merchant's wallet with stablegate devnet refund.
      const buyer = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
      const refund = await (
        await fetch(`${devEnv.PUBLIC_URL}/v1/charges/${charge.id}/refunds`, {
          method: "POST",
          headers,
          body: JSON.stringify({ amount: "2.5", address: buyer }),
        })
      ).json();
      expect(refund).toMatchObject({ status: "AWAITING_PAYMENT", amount: "2.50" });
      const refunded = await run(process.execPath, ["dist/cli/main.js", "devnet", "refund", refund.id, "--key", key], { env: devEnv });
      expect(refunded.stdout).toMatch(new RegExp(`^Sent 2\\.50 USDC from 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 to ${buyer}`));
      let back: { status: string } | undefined;
      for (let i = 0; i < 200 && back?.status !== "COMPLETED"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        back = await (await fetch(`${devEnv.PUBLIC_URL}/v1/refunds/${refund.id}`, { headers })).json();
      }
      expect(back).toMatchObject({ status: "COMPLETED" });
      const bad = await run(process.execPath, ["dist/cli/main.js", "devnet", "pay", "chrg_missing"], { env: devEnv }).catch((e) => e);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/No such charge/);
    } finally {
      child.kill("SIGTERM");
      expect(await exited, out.slice(-3000)).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000); // a cold start, then a payment and a refund on the devnet
});
