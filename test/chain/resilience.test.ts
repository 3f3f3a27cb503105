// Settlement when things go wrong around it: a flaky RPC endpoint, and a payout that is not mined
// (replaced with higher fees, up to the chain's ceiling; past the chain's limit, reported as stuck).
import { parseUnits, Transaction } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { seeded } from "../helpers/seeded.js";
import { recordingLogger } from "../helpers/logs.js";
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
      expect(await app.db.prisma.chainTransfer.count({ where: { chargeId: { in: ids }, kind: "PAYMENT" } })).toBe(8);
      const completed = await app.db.prisma.event.findMany({ where: { type: "charge.completed" } });
      expect(completed.filter((e) => ids.includes((e.data as { id: string }).id))).toHaveLength(8);
      // The proxy really did fail requests, and the runner went through them.
      expect(proxy.failed()).toBeGreaterThan(0);
    } finally {
      await runner.stop();
    }
  }, 180_000);
});

describe("a payout not mined", () => {
  it("is bumped up to the chain's fee ceiling and no further; past the chain's limit it is stuck: /readyz degraded, /metrics, one error line", async () => {
    const { logger, lines } = recordingLogger();
    const ceiling = (await chain.provider.getFeeData()).maxFeePerGas! + 1n;
    const tight = { ...(await chain.enabled(2)), maxFeePerGas: ceiling, stuckAfterSeconds: 1 };
    // The API's view of the chain (its /readyz) takes the same limit for this test.
    devnet.stuckAfterSeconds = 1;
    clearInterval(producer);
    await chain.automine(false);
    const runner = startChainRunner(app.db, tight, logger, { intervalMs: 50, settings: SETTINGS, bumpAfterMs: 300 });
    try {
      const { id, clone } = await payableCharge("2");
      await chain.pay(chain.wallet(3), clone, usdc("2"));
      await chain.mine(2);
      const payout = await waitFor("the payout sent and bumped", async () => {
        const f = await app.db.prisma.relayerTransaction.findFirst({ where: { kind: "FLUSH", clones: { some: { chargeId: id } } } });
        return f && f.bumps >= 1 ? f : undefined;
      });
      // Several bump intervals later (each pass past one says it waits at the ceiling): it waits as it is.
      const atCeiling = () => lines().filter((l) => l.msg.includes("fees are at the chain's ceiling")).length;
      await waitFor("three passes waiting at the ceiling", async () => atCeiling() >= 3);
      const now = await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: payout.id } });
      expect(now.bumps).toBe(1);
      expect(Transaction.from(now.rawTx).maxFeePerGas).toBe(ceiling);
      // Unmined past the chain's limit (1 s here): reported.
      const degraded = await waitFor("/readyz degraded", async () => {
        const body = (await app.call("GET", "/readyz", { key: null })).body;
        return body.status === "degraded" ? body : undefined;
      });
      expect(degraded.reasons).toEqual([
        expect.stringMatching(new RegExp(`^chain 31337: relayer transaction ${payout.id} \\(nonce ${payout.nonce}\\) unmined for`)),
      ]);
      expect((await app.call("GET", "/metrics", { key: null })).text).toContain('stablegate_relayer_stuck_transactions{chain_id="31337"} 1');
      await waitFor("the error line", async () => lines().some((l) => l.level === 50 && l.msg.startsWith("relayer transaction stuck")));
      await runnerPassed(runner, chain.provider);
      expect(lines().filter((l) => l.level === 50 && l.msg.startsWith("relayer transaction stuck"))).toHaveLength(1);
      await chain.automine(true);
      mineEvery(100);
      await waitFor("the charge completed", async () => (await getCharge(id)).status === "COMPLETED");
      await waitFor("/readyz ok", async () => (await app.call("GET", "/readyz", { key: null })).body.status === "ok");
    } finally {
      devnet.stuckAfterSeconds = 120;
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
      clearInterval(producer);
      await chain.automine(false);
      await chain.pay(chain.wallet(3), clone, usdc("9"));
      await chain.mine(2);
      // Confirmed, flushed, and then nothing is mined for a while. The replacement is stored before
      // it is broadcast, so wait for the node to have it too.
      const flush = await waitFor("a replaced flush", async () => {
        const f = await app.db.prisma.relayerTransaction.findFirst({ where: { kind: "FLUSH", clones: { some: { chargeId: id } } } });
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
