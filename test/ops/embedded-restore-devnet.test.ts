// An embedded backup restored into a fresh DATA_DIR brings the devnet's chain state with it, so the
// restored ledger and the restored devnet agree and indexing goes on; a backup without that state
// (older, or taken with no devnet) still restores, the devnet starts over, and the indexer follows the
// new devnet instead of waiting forever below its old cursor.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { payFromTestWallet, readDevnetInfo } from "../../src/chain/devnet.js";
import { waitFor } from "../helpers/chain.js";
import { apiClient, type ServiceProcess, spawnService } from "../helpers/service-process.js";

const run = promisify(execFile);
const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "sg-restore-devnet-"));
  dirs.push(d);
  return d;
};
const running = new Set<ServiceProcess>();
afterAll(() => {
  for (const p of running) p.child.kill("SIGKILL");
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const envOf = (dataDir: string) => ({
  ...process.env,
  NODE_ENV: "development",
  DATA_DIR: dataDir,
  PORT: "0",
  WORKER_PORT: "0",
  DATABASE_URL: "",
  REDIS_URL: "",
  LOG_LEVEL: "info",
});

/** Runs the CLI on DATA_DIR `dataDir`; resolves with its exit code and output. */
async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["dist/cli/main.js", ...args], { env: { ...envOf(dataDir), LOG_LEVEL: "silent" } });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

/** `npm start` (with its devnet) on `dataDir`, until it listens; `stop` ends it with SIGTERM. */
async function start(dataDir: string) {
  const svc = spawnService("dist/main.js", envOf(dataDir));
  running.add(svc);
  const url = (await svc.waitFor(/"url":"(http:[^"]+)"/, 60_000))[1]!;
  await svc.waitFor(/"chains":\[31337\]/, 60_000);
  return {
    svc,
    url,
    async stop() {
      svc.child.kill("SIGTERM");
      expect(await svc.exited, svc.output().slice(-3000)).toBe(0);
      running.delete(svc);
    },
  };
}

/** Creates a charge of 10 USDC on the devnet, pays it from the test wallet and waits for it to complete; returns its id. */
async function payCharge(dataDir: string, url: string, key: string, orderId: string): Promise<string> {
  const api = apiClient(() => url, key);
  const charge = await api("POST", "/v1/charges", { orderId, amount: "10" });
  const picked = await api("POST", `/v1/public/charges/${charge.id}/chain`, { chainId: 31337 });
  await payFromTestWallet(readDevnetInfo(dataDir), picked.cloneAddress as string, 10_000_000n);
  await waitFor(`${orderId} completed`, async () => (await api("GET", `/v1/charges/${charge.id}`)).status === "COMPLETED", 60_000);
  return charge.id as string;
}

describe("an embedded restore into a fresh DATA_DIR and the devnet", () => {
  it("restores the devnet's state with the database; without it, the new devnet is followed from its head", async () => {
    const source = dir();
    let service = await start(source);
    const key = /sk_test_[0-9A-Za-z]{32}/.exec(service.svc.output())![0];
    // The old devnet runs well ahead of a new one's first blocks, and the indexer follows it there.
    await fetch(readDevnetInfo(source).rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: ["0x1e"] }),
    });
    const before = await payCharge(source, service.url, key, "before-backup");
    await service.stop();

    const withDevnet = join(dir(), "with-devnet.tgz");
    const backup = await cli(source, "backup", "--out", withDevnet);
    expect(backup.code, backup.out).toBe(0);
    expect(backup.out).toMatch(/the embedded database and the devnet's chain state/);
    // A backup as an older version (or a DATA_DIR without a devnet) made it: no devnet state in it.
    const state = join(source, "devnet", "state.json");
    renameSync(state, `${state}.aside`);
    const withoutDevnet = join(dir(), "without-devnet.tgz");
    const bare = await cli(source, "backup", "--out", withoutDevnet);
    expect(bare.code, bare.out).toBe(0);
    expect(bare.out).not.toMatch(/chain state/);
    renameSync(`${state}.aside`, state);

    // A payment after the backup: the restored database and devnet are both from before it.
    service = await start(source);
    const after = await payCharge(source, service.url, key, "after-backup");
    await service.stop();

    const restored = dir();
    const restore = await cli(restored, "restore", withDevnet);
    expect(restore.code, restore.out).toBe(0);
    expect(restore.out).toMatch(/the database and the devnet's chain state/);
    expect(existsSync(join(restored, "devnet", "state.json"))).toBe(true);
    service = await start(restored);
    let api = apiClient(() => service.url, key);
    expect((await api("GET", `/v1/charges/${before}`)).status).toBe("COMPLETED");
    expect((await api("GET", `/v1/charges/${after}`)).id).toBeUndefined();
    await payCharge(restored, service.url, key, "after-restore");
    expect(service.svc.output()).not.toMatch(/started over/);
    await service.stop();

    const fresh = dir();
    const old = await cli(fresh, "restore", withoutDevnet);
    expect(old.code, old.out).toBe(0);
    expect(old.out).toMatch(/holds no devnet state: a devnet started here starts over, and the indexer follows it from its new head/);
    expect(existsSync(join(fresh, "devnet", "state.json"))).toBe(false);
    service = await start(fresh);
    api = apiClient(() => service.url, key);
    expect((await api("GET", `/v1/charges/${before}`)).status).toBe("COMPLETED");
    await payCharge(fresh, service.url, key, "after-bare-restore");
    expect(service.svc.output()).toMatch(/the local devnet started over/);
    await service.stop();
  }, 300_000);
});
