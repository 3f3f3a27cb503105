// Crash safety of the real service process: SIGKILL it after a payment was seen, after the payout
// (which deploys the clones) was sent, and after it was mined; each restart picks up where the last one died and every
// charge ends COMPLETED exactly once, with one flush and no transaction sent twice. Then failover:
// two workers on one PostgreSQL database, only one works a chain, and the other takes over.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/client.js";
import { migrate } from "../../src/db/migrate.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { ANVIL_KEYS, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { freshDatabase, WALLET } from "../helpers/harness.js";
import { apiClient, type ServiceProcess, spawnService } from "../helpers/service-process.js";

let chain: TestChain;
let env: NodeJS.ProcessEnv;
let dataDir: string;
let pg: Awaited<ReturnType<typeof freshDatabase>> | null = null;
let key: string;
const running = new Set<ServiceProcess>();

beforeAll(async () => {
  chain = await startTestChain();
  dataDir = mkdtempSync(join(tmpdir(), "sg-crash-"));
  env = {
    ...process.env,
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    PORT: "0",
    WORKER_PORT: "0",
    DATA_DIR: dataDir,
    REDIS_URL: "",
    DEVNET: "false",
    FEE_RECIPIENT: chain.feeRecipient,
    CHAIN_31337_RPC_URL: chain.anvil.url,
    CHAIN_31337_FACTORY: await chain.factory.getAddress(),
    CHAIN_31337_USDC: await chain.usdc.getAddress(),
    CHAIN_31337_CONFIRMATIONS: "3",
    CHAIN_31337_RELAYER_KEY: ANVIL_KEYS[0],
    CHAIN_POLL_INTERVAL_MS: "100",
    // The test machine's own load must not shed this test's anonymous calls.
    SHED_ANONYMOUS_LAG_MS: "0",
  };
  let db: Database;
  if (process.env.DATABASE_URL) {
    pg = await freshDatabase();
    db = pg.db;
    env.DATABASE_URL = pg.url;
  } else {
    env.DATABASE_URL = "";
    db = await openDatabase({ dataDir });
    await migrate(db);
  }
  const merchant = await createMerchant(db.prisma, { name: "Crash Shop", testWallet: WALLET }, { feeBps: 100 });
  key = merchant.apiKeys.test.secret;
  // The embedded database belongs to one process at a time: the service's, from here on.
  if (!pg) await db.close();
}, 60_000);
afterAll(async () => {
  for (const p of running) p.child.kill("SIGKILL");
  await pg?.drop();
  await chain?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function start(script = "dist/main.js"): ServiceProcess {
  const p = spawnService(script, env);
  running.add(p);
  void p.exited.then(() => running.delete(p));
  return p;
}
async function kill(p: ServiceProcess): Promise<void> {
  p.child.kill("SIGKILL");
  expect(await p.exited).toBeNull();
}
const usdc = (s: string) => parseUnits(s, 6);
const relayer = () => chain.deployer.address;
const nonce = (tag: "latest" | "pending") => chain.provider.getTransactionCount(relayer(), tag);

describe("the service killed with SIGKILL mid-settlement", () => {
  it("after detection, after the flush was sent, after it was mined: every charge completes once, with one flush", async () => {
    let svc = start();
    // Each (re)start listens on a new port.
    let url = (await svc.waitFor(/"url":"(http:[^"]+)"/))[1]!;
    const api = apiClient(() => url, key);
    const charges: { id: string; clone: string }[] = [];
    for (const orderId of ["crash-a", "crash-b"]) {
      const charge = await api("POST", "/v1/charges", { orderId, amount: "10" });
      const picked = await api("POST", `/v1/public/charges/${charge.id}/chain`, { chainId: 31337 });
      charges.push({ id: charge.id as string, clone: picked.cloneAddress as string });
    }
    // Picking sends nothing: each clone is deployed by the payout that first pays it out.
    const startNonce = await nonce("latest");
    const [a, b] = charges as [(typeof charges)[number], (typeof charges)[number]];

    // 1. A's payment is seen (1 of 3 confirmations), then the process dies.
    await chain.pay(chain.wallet(3), a.clone, usdc("10"));
    await waitFor("A's payment seen", async () => (await api("GET", `/v1/public/charges/${a.id}`)).payments.length === 1);
    await kill(svc);

    // 2. B is paid too; both get their confirmations; the flush is sent and the process dies before it is mined.
    await chain.automine(false);
    svc = start();
    await svc.waitFor(/chain runner active/);
    await chain.pay(chain.wallet(4), b.clone, usdc("10"));
    await chain.mine(3);
    await waitFor("a flush in the mempool", async () => (await nonce("pending")) > (await nonce("latest")));
    await kill(svc);

    // 3. The flush is mined while nothing runs; a new process sees it mined and dies before its confirmations.
    await chain.mine(1);
    svc = start();
    await svc.waitFor(/"kind":"FLUSH".*"relayer transaction mined"/);
    await kill(svc);

    // 4. The last restart confirms everything.
    svc = start();
    url = (await svc.waitFor(/"url":"(http:[^"]+)"/))[1]!;
    const producer = setInterval(() => void chain.mine().catch(() => {}), 100);
    try {
      await waitFor("both charges completed", async () =>
        (await Promise.all(charges.map((c) => api("GET", `/v1/charges/${c.id}`)))).every((c) => c.status === "COMPLETED"),
      );
    } finally {
      clearInterval(producer);
      await chain.automine(true);
    }
    svc.child.kill("SIGTERM");
    expect(await svc.exited, svc.output().slice(-2000)).toBe(0);

    for (const c of charges) {
      expect(await chain.flushCount(c.clone)).toBe(1);
      expect(await chain.provider.getCode(c.clone)).not.toBe("0x");
      expect(await chain.balance(c.clone)).toBe(0n);
    }
    const db = pg ? pg.db : await openDatabase({ dataDir });
    try {
      const rows = await db.prisma.charge.findMany({ where: { id: { in: charges.map((c) => c.id) } } });
      for (const row of rows) {
        expect(row.status).toBe("COMPLETED");
        expect([row.amountReceived, row.feeAmount, row.netAmount].map((d) => d?.toFixed())).toEqual([usdc("10"), usdc("0.1"), usdc("9.9")].map(String));
      }
      const completed = await db.prisma.event.findMany({ where: { type: "charge.completed" } });
      expect(completed.map((e) => (e.data as { id: string }).id).sort()).toEqual(charges.map((c) => c.id).sort());
      const flushes = await db.prisma.relayerTransaction.findMany({ where: { kind: "FLUSH" } });
      expect(flushes.length).toBeGreaterThan(0);
      expect(flushes.every((f) => f.status === "CONFIRMED")).toBe(true);
      // Nothing else was sent: the relayer's transactions since are exactly these flushes.
      expect(await nonce("latest")).toBe(startNonce + flushes.length);
    } finally {
      if (!pg) await db.close();
    }
  }, 120_000);
});

// Two processes cannot share the embedded database (by design, see db/embedded-lock.ts): failover
// between workers exists only on PostgreSQL, which CI's second run provides.
describe.runIf(process.env.DATABASE_URL)("two workers on one PostgreSQL database", () => {
  it("only one works the chain; when it is killed the other takes over within a few poll intervals", async () => {
    const workers = [start("dist/worker.js"), start("dist/worker.js")];
    const active = await Promise.race(workers.map((w) => w.waitFor(/chain runner active/, 30_000).then(() => w)));
    const standby = workers.find((w) => w !== active)!;
    // Kept: a standby's failed try at the lock leaves no trace outside it; a second of its polls (every 100 ms here) must not take it.
    await new Promise((r) => setTimeout(r, 1000));
    expect(standby.output()).not.toMatch(/chain runner active/);
    const killedAt = Date.now();
    await kill(active);
    await standby.waitFor(/chain runner active/, 10_000);
    const tookOverMs = Date.now() - killedAt;
    expect(tookOverMs).toBeLessThan(5 * 100 + 2000);
    standby.child.kill("SIGTERM");
    expect(await standby.exited).toBe(0);
  }, 60_000);
});
