// Settlement when things go wrong around it: a flaky RPC endpoint, and a flush that is not mined.
import { parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.mjs";

const usdc = (s: string) => parseUnits(s, 6);
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let proxy: RpcProxy;
let producer: NodeJS.Timeout | undefined;

beforeAll(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.anvil.url, { failRate: 0.3, maxDelayMs: 80, random: seeded(2026) });
  devnet = await chain.enabled(2, proxy.url);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  await app?.stop();
  await proxy?.close();
  await chain?.stop();
});

/** A repeatable stand-in for Math.random (mulberry32): the same faults in the same order on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const mineEvery = (ms: number) => {
  clearInterval(producer);
  producer = setInterval(() => void chain.mine().catch(() => {}), ms);
};
let seq = 0;
async function payableCharge(amount: string) {
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `res-${++seq}`, amount } })).body;
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  expect(picked.status).toBe(200);
  return { id: charge.id as string, clone: picked.body.cloneAddress as string };
}
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;

describe("a flaky RPC endpoint", () => {
  it("fails 30% of calls and delays the rest: every charge still settles, none twice", async () => {
    const runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 60_000 });
    mineEvery(150);
    try {
      const charges = await Promise.all(Array.from({ length: 8 }, () => payableCharge("5")));
      await waitFor(
        "every clone deployed",
        async () => (await app.db.prisma.charge.count({ where: { id: { in: charges.map((c) => c.id) }, deployedAt: null } })) === 0,
        60_000,
      );
      for (const [i, c] of charges.entries()) await chain.pay(chain.wallet(3 + (i % 2)), c.clone, usdc("5"));
      for (const c of charges) {
        const done = await waitFor(
          `charge ${c.id} completed`,
          async () => {
            const got = await getCharge(c.id);
            return got.status === "COMPLETED" ? got : undefined;
          },
          90_000,
        );
        expect(done).toMatchObject({ amountReceived: "5.00", feeAmount: "0.05", netAmount: "4.95" });
        expect(await chain.flushCount(c.clone)).toBe(1);
        expect(await chain.balance(c.clone)).toBe(0n);
      }
      const ids = charges.map((c) => c.id);
      expect(await app.db.prisma.payment.count({ where: { chargeId: { in: ids } } })).toBe(8);
      const completed = await app.db.prisma.event.findMany({ where: { type: "charge.completed" } });
      expect(completed.filter((e) => ids.includes((e.data as { id: string }).id))).toHaveLength(8);
      // The proxy really did fail requests, and the runner went through them.
      expect(proxy.failed()).toBeGreaterThan(0);
    } finally {
      await runner.stop();
    }
  }, 180_000);
});

describe("a stuck deployment", () => {
  it("is replaced with higher fees at the same nonce; the clone is deployed once", async () => {
    const direct = await chain.enabled(2);
    clearInterval(producer);
    await chain.automine(false);
    const runner = startChainRunner(app.db, direct, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 500 });
    try {
      const before = await chain.provider.getTransactionCount(chain.deployer.address, "latest");
      const { id, clone } = await payableCharge("3");
      const batch = async () => app.db.prisma.relayerTransaction.findFirst({ where: { kind: "DEPLOY", deployments: { some: { chargeId: id } } } });
      const first = await waitFor("the deployment sent", async () => (await batch())?.txHashes[0]);
      const second = await waitFor("the deployment replaced", async () => {
        const tx = await batch();
        // The replacement is stored before it is broadcast: wait for the node to have it too.
        return tx && tx.txHashes.length > 1 && (await chain.provider.getTransaction(tx.txHashes[1]!)) ? tx.txHashes[1] : undefined;
      });
      // The node dropped the first version for the replacement: same nonce, higher fees.
      const [old, replacement] = await Promise.all([chain.provider.getTransaction(first!), chain.provider.getTransaction(second!)]);
      expect(old).toBeNull();
      expect(replacement!.nonce).toBe(before);
      await chain.automine(true);
      mineEvery(100);
      await waitFor("the clone deployed", async () => (await getCharge(id)).deployedAt !== null);
      expect(await chain.provider.getCode(clone)).not.toBe("0x");
      expect(await chain.provider.getTransactionCount(chain.deployer.address, "latest")).toBe(before + 1);
    } finally {
      await chain.automine(true);
      await runner.stop();
    }
  });
});

describe("a stuck flush", () => {
  it("is replaced with higher fees at the same nonce; only one version is mined", async () => {
    const direct = await chain.enabled(2);
    const runner = startChainRunner(app.db, direct, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 500 });
    try {
      mineEvery(100);
      const { id, clone } = await payableCharge("9");
      await waitFor("the clone deployed", async () => (await getCharge(id)).deployedAt !== null);
      clearInterval(producer);
      await chain.automine(false);
      await chain.pay(chain.wallet(3), clone, usdc("9"));
      await chain.mine(2);
      // Confirmed, flushed, and then nothing is mined for a while. The replacement is stored before
      // it is broadcast, so wait for the node to have it too.
      const flush = await waitFor("a replaced flush", async () => {
        const f = await app.db.prisma.relayerTransaction.findFirst({ where: { kind: "FLUSH", charges: { some: { id } } } });
        return f && f.bumps >= 1 && (await chain.provider.getTransaction(f.txHashes[1]!)) !== null ? f : undefined;
      });
      // The node dropped the first version for the replacement: same nonce, higher fees.
      const [first, second] = await Promise.all(flush.txHashes.slice(0, 2).map((h) => chain.provider.getTransaction(h)));
      expect(first).toBeNull();
      expect(second!.nonce).toBe(flush.nonce);
      await chain.automine(true);
      mineEvery(100);
      const done = await waitFor("the charge completed", async () => {
        const c = await getCharge(id);
        return c.status === "COMPLETED" ? c : undefined;
      });
      // The charge completes from the chain's settlement; our transaction's own bookkeeping follows.
      const final = await waitFor("the flush confirmed", async () => {
        const tx = await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: flush.id } });
        return tx.status === "CONFIRMED" ? tx : undefined;
      });
      expect(final.txHashes).toContain(done.flushTxHash);
      expect(await chain.flushCount(clone)).toBe(1);
      const mined = await Promise.all(final.txHashes.map((h) => chain.provider.getTransactionReceipt(h)));
      expect(mined.filter((r) => r !== null)).toHaveLength(1);
    } finally {
      await chain.automine(true);
      await runner.stop();
    }
  });
});
