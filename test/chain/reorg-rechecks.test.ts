// Reorgs deeper than the confirmations when something goes wrong in between, on anvil with Circle's
// FiatToken: the node refuses receipts for ~2 s while the worker checks what the reorg took away, or
// the worker dies between the rollback and that check. Either way the payout the reorg removed is
// reversed, the clone's money is paid out again (once), the charge needs review and reconciliation
// finds nothing. A payment taken away before any payout reopens its charge (PENDING, then EXPIRED by
// the chain's clock), and a payout transaction the chain does not have is one difference, not two.
import { type Contract, hexlify, parseUnits, randomBytes } from "ethers";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { payoutWords } from "../../src/chain/clones.js";
import { ChainRpc } from "../../src/chain/rpc.js";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { confirmChainMoney } from "../../src/domain/payments.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { ChainIndexer } from "../../src/jobs/indexer.js";
import { RECHECK_PENDING_MS } from "../../src/jobs/reorgs.js";
import { reconcileChain } from "../../src/jobs/reconcile.js";
import { runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.mjs";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);
const quiet = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let proxy: RpcProxy;
let devnet: EnabledChain;
let app: TestApp;
let runner: ChainRunner | null = null;
const logs = recordingLogger();
const settings = () => ({ ...SETTINGS, feed: app.live });

beforeAll(async () => {
  chain = await startTestChain();
  // The worker reaches the node through a proxy that can refuse calls, as a hosted provider does.
  proxy = await startRpcProxy(chain.anvil.url);
  devnet = await chain.enabled(CONFIRMATIONS, proxy.url);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
}, 60_000);
afterEach(async () => {
  proxy.setFaults({});
  producing = false;
  await stopRunner();
});
afterAll(async () => {
  clearInterval(producer);
  await stopRunner();
  await app?.stop();
  await proxy?.close();
  await chain?.stop();
});

function startRunner() {
  runner = startChainRunner(app.db, devnet, logs.logger, { intervalMs: 50, settings: settings(), bumpAfterMs: 60_000 });
}
async function stopRunner() {
  await runner?.stop();
  runner = null;
}
/** A block every 100 ms while `producing`, so confirmations come. */
let producing = false;
const producer = setInterval(() => {
  if (producing) void chain?.mine().catch(() => {});
}, 100);

let seq = 0;
async function charge(amount: string): Promise<{ id: string; address: string }> {
  const made = (await app.call("POST", "/v1/charges", { body: { orderId: `recheck-${++seq}`, amount } })).body;
  const picked = await app.call("POST", `/v1/public/charges/${made.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  return { id: made.id, address: picked.body.cloneAddress };
}
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
const until = (what: string, id: string, check: (c: any) => boolean, timeoutMs = 30_000) =>
  waitFor(
    what,
    async () => {
      const c = await getCharge(id);
      return check(c) ? c : undefined;
    },
    timeoutMs,
  );
const eventTypes = async (id: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map((e) => e.type);
async function reconcile() {
  const rpc = new ChainRpc(devnet.chainId, [chain.anvil.url]);
  try {
    return await reconcileChain(app.db.prisma, rpc, devnet);
  } finally {
    rpc.destroy();
  }
}

/**
 * A charge of 10 paid, and paid out at once by a stranger (anyone may call a clone's payout; unlike our
 * relayer, nobody sends it again after a reorg); the worker confirms both. Then `beforeFork`, and the
 * chain forks from between the payment and the payout: the payment stands, the payout (and the
 * clone's deployment in it) is gone for good, 20 blocks deep.
 */
async function payoutTakenAway(beforeFork: () => Promise<void>) {
  const { id, address } = await charge("10");
  const { settlementWallet } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id } });
  await chain.pay(chain.wallet(3), address, usdc("10"));
  const fork = await chain.provider.send("evm_snapshot", []);
  const merchantBefore = await chain.balance(WALLET);
  const words = payoutWords({ chargeId: id, wallet: settlementWallet!, feeBps: 100, amount: 0n, deployed: false });
  const stranger = await (chain.factory.connect(chain.wallet(6)) as Contract).getFunction("payout")(await chain.usdc.getAddress(), words);
  const strangerPayout = (await stranger.wait())!.hash;
  // Both confirmed in the worker's first look: no payout of ours comes in between.
  await chain.mine(CONFIRMATIONS + 1);
  startRunner();
  producing = true;
  const done = await until("the charge completed by the stranger's payout", id, (c) => c.status === "COMPLETED");
  expect(done.flushTxHash).toBe(strangerPayout);
  producing = false;
  expect(await chain.balance(WALLET)).toBe(merchantBefore + usdc("9.9"));
  const mark = logs.lines().length;
  await beforeFork();
  expect(await chain.provider.send("evm_revert", [fork])).toBe(true);
  await chain.mine(20);
  expect(await chain.provider.getTransactionReceipt(strangerPayout)).toBeNull();
  expect(await chain.balance(address)).toBe(usdc("10"));
  return { id, address, merchantBefore, firstPayout: strangerPayout, mark };
}

/** After the payout was taken away: reversed, paid out again once, flagged once, and nothing left for reconciliation. */
async function expectPaidOutAgain(taken: Awaited<ReturnType<typeof payoutTakenAway>>) {
  const { id, address, merchantBefore, firstPayout } = taken;
  const after = await until(
    "the payout made again",
    id,
    (c) => c.needsReview && c.flushTxHash !== null && c.flushTxHash !== firstPayout && c.deployedAt !== null,
  );
  expect(after).toMatchObject({ status: "COMPLETED", amountReceived: "10.00", netAmount: "9.90", feeAmount: "0.10" });
  expect(after.reviewReason).toMatch(/a reorg \d+ blocks deep \(deeper than the confirmations\)/);
  expect(after.reviewReason).toContain(firstPayout);
  const first = await app.db.prisma.chainTransfer.findMany({ where: { chargeId: id, txHash: firstPayout } });
  expect(first.map((t) => `${t.kind} ${t.status}`).sort()).toEqual(["FEE REVERSED", "PAYOUT REVERSED"]);
  // The money came back to the clone and went to the merchant once, by one payout the chain has.
  expect(await chain.balance(WALLET)).toBe(merchantBefore + usdc("9.9"));
  expect(await chain.balance(address)).toBe(0n);
  expect(await chain.flushCount(address)).toBe(1);
  const clone = await app.db.prisma.clone.findUniqueOrThrow({ where: { chargeId_chainId: { chargeId: id, chainId: devnet.chainId } } });
  expect(clone.held.toFixed()).toBe("0");
  // Each transfer the reorg left above the fork was checked once, and is done.
  const rechecks = await app.db.prisma.reorgRecheck.findMany({ where: { transfer: { chargeId: id } }, include: { transfer: true } });
  expect(rechecks.map((r) => `${r.transfer.kind} ${r.outcome} ${r.doneAt !== null}`).sort()).toEqual(["FEE reversed true", "PAYOUT reversed true"]);
  const types = await eventTypes(id);
  expect(types.filter((t) => t === "charge.needs_review")).toHaveLength(1);
  expect(types.filter((t) => t === "charge.completed")).toHaveLength(1);
  await waitFor("the new payout confirmed as far as reconciliation looks", async () => {
    const result = await reconcile();
    return result.skipped === null && result.differences.length === 0;
  });
}

describe("a deep reorg's re-check, interrupted", () => {
  it("the node refuses receipts for 2 s during it: the removed payout is reversed once they come back, the clone paid out again, once", async () => {
    const taken = await payoutTakenAway(async () => proxy.setFaults({ refuseMethods: ["eth_getTransactionReceipt"] }));
    await waitFor("the rollback", async () =>
      logs
        .lines()
        .slice(taken.mark)
        .some((l) => String(l.msg).startsWith("chain reorganised")),
    );
    // Refused through several passes: each one says so and waits.
    const refusedPasses = () =>
      logs
        .lines()
        .slice(taken.mark)
        .filter((l) => l.level === 50 && String(l.msg).startsWith("could not re-check the transfers a reorg left above its fork")).length;
    await waitFor("three passes refused the receipts", async () => refusedPasses() >= 3);
    expect(proxy.calls().eth_getTransactionReceipt).toBeGreaterThan(0);
    proxy.setFaults({});
    producing = true;
    await expectPaidOutAgain(taken);
    const lines = logs.lines().slice(taken.mark);
    expect(lines.some((l) => l.level === 50 && String(l.msg).startsWith("could not re-check the transfers a reorg left above its fork"))).toBe(true);
  }, 90_000);

  it("the worker dies between the rollback and the re-check: the next worker re-checks, reverses the payout and pays the clone out again, once", async () => {
    const taken = await payoutTakenAway(stopRunner);
    const before = await app.db.prisma.chainCursor.findUniqueOrThrow({ where: { chainId: devnet.chainId } });
    // The worker that notices the reorg commits the rollback and dies before any receipt is read.
    const rpc = new ChainRpc(devnet.chainId, [chain.anvil.url]);
    rpc.getTransactionReceipt = async () => {
      throw new Error("the worker was killed");
    };
    try {
      // The step may fail or not: what it did after the receipts were asked for died with the worker.
      await new ChainIndexer(app.db.prisma, rpc, devnet, quiet, settings()).step().catch(() => {});
    } finally {
      rpc.destroy();
    }
    const rolledBack = await app.db.prisma.chainCursor.findUniqueOrThrow({ where: { chainId: devnet.chainId } });
    expect(rolledBack.blockNumber).toBeLessThan(before.blockNumber);
    startRunner();
    producing = true;
    await expectPaidOutAgain(taken);
  }, 90_000);
});

describe("reconciliation", () => {
  it("a confirmed payout transaction the chain does not have is one difference, not one per transfer in it", async () => {
    const { id, address } = await charge("3");
    startRunner();
    producing = true;
    await chain.pay(chain.wallet(3), address, usdc("3"));
    const done = await until("the charge completed", id, (c) => c.status === "COMPLETED" && c.flushTxHash !== null);
    await waitFor("the payout within reconciliation's reach", async () => {
      const result = await reconcile();
      return result.skipped === null && result.transfersChecked > 0 && result.differences.length === 0;
    });
    await stopRunner();
    producing = false;
    // The ledger's payout now names a transaction no chain has (its wallet transfer and its fee).
    const rows = await app.db.prisma.chainTransfer.findMany({ where: { chargeId: id, txHash: done.flushTxHash } });
    expect(rows).toHaveLength(2);
    const bogus = hexlify(randomBytes(32));
    for (const r of rows) {
      await app.db.prisma.chainTransfer.update({
        where: { id: r.id },
        data: { txHash: bogus, blockHash: bogus, factKey: r.factKey.replace(r.txHash.toLowerCase(), bogus) },
      });
    }
    try {
      const { differences } = await reconcile();
      expect(differences).toEqual([expect.objectContaining({ chargeId: id, kind: "transfer_missing", txHash: bogus })]);
    } finally {
      await Promise.all(
        rows.map((r) => app.db.prisma.chainTransfer.update({ where: { id: r.id }, data: { txHash: r.txHash, factKey: r.factKey, blockHash: r.blockHash } })),
      );
    }
    expect((await reconcile()).differences).toEqual([]);
  }, 60_000);
});

/** An indexer driven by hand (no worker: nothing pays out), and a step to the head with its confirmations. */
function byHand(url = chain.anvil.url) {
  const rpc = new ChainRpc(devnet.chainId, [url]);
  const indexer = new ChainIndexer(app.db.prisma, rpc, devnet, quiet, settings());
  const settle = async () => {
    let step = await indexer.step();
    while (step.behind) step = await indexer.step();
    await confirmChainMoney(app.db.prisma, settings(), devnet, step.tip);
    return step;
  };
  return { rpc, indexer, settle };
}

/**
 * A payment of `amount` to the charge, confirmed (RECEIVED), then taken away by a reorg from just
 * before it (5 new blocks, from `at` seconds when given); its signed transaction, as the node had it.
 */
async function paymentReorgedOut(id: string, address: string, settle: () => Promise<unknown>, at?: number) {
  await settle();
  const payer = chain.wallet(3);
  await chain.mint(payer.address, usdc("10"));
  const fork = await chain.provider.send("evm_snapshot", []);
  const paid = await (chain.usdc.connect(payer) as Contract).getFunction("transfer")(address, usdc("10"));
  await paid.wait();
  await chain.mine(CONFIRMATIONS);
  await settle();
  expect(await getCharge(id)).toMatchObject({ status: "RECEIVED", amountReceived: "10.00", needsReview: false });
  const raw: string = await chain.provider.send("eth_getRawTransactionByHash", [paid.hash]);
  expect(await chain.provider.send("evm_revert", [fork])).toBe(true);
  if (at !== undefined) await chain.provider.send("evm_setNextBlockTimestamp", [at]);
  await chain.mine(5);
  return { hash: paid.hash as string, raw };
}

describe("a payment a deep reorg sends back to the mempool", () => {
  it("is not reversed while the node holds it unmined, nor does indexing wait for it; still unmined after RECHECK_PENDING_MS, it is", async () => {
    const { id, address } = await charge("10");
    const { rpc, settle } = byHand();
    try {
      const { hash, raw } = await paymentReorgedOut(id, address, settle);
      await chain.automine(false);
      expect(await chain.provider.send("eth_sendRawTransaction", [raw])).toBe(hash);
      await settle();
      // Rolled back, and read on to the head past the waiting transaction.
      const head = await chain.provider.getBlockNumber();
      expect((await app.db.prisma.chainCursor.findUniqueOrThrow({ where: { chainId: devnet.chainId } })).blockNumber).toBe(BigInt(head));
      expect(await getCharge(id)).toMatchObject({ status: "RECEIVED", amountReceived: "10.00", needsReview: false });
      const [open] = await app.db.prisma.reorgRecheck.findMany({ where: { transfer: { chargeId: id } } });
      expect(open).toMatchObject({ doneAt: null, txHash: hash });
      await settle();
      expect((await app.db.prisma.reorgRecheck.findUniqueOrThrow({ where: { id: open!.id } })).doneAt).toBeNull();

      // Time passes (the re-check was written longer ago than the bound) and the node still holds it unmined.
      await app.db.prisma.reorgRecheck.update({ where: { id: open!.id }, data: { createdAt: new Date(Date.now() - RECHECK_PENDING_MS - 60_000) } });
      expect((await chain.provider.getTransaction(hash))?.blockNumber).toBeNull();
      await settle();
      expect(await getCharge(id)).toMatchObject({ status: "PENDING", amountReceived: "0.00", needsReview: true });
      expect(await app.db.prisma.reorgRecheck.findUniqueOrThrow({ where: { id: open!.id } })).toMatchObject({ outcome: "reversed" });
      await chain.provider.send("anvil_dropTransaction", [hash]);
    } finally {
      await chain.automine(true);
      rpc.destroy();
    }
  }, 60_000);
});

describe("a deep reorg's re-checks when the node answers for some transactions only", () => {
  it("those it answered for are settled; the others wait for the next step", async () => {
    const a = await charge("10");
    const b = await charge("10");
    const { rpc, indexer, settle } = byHand(proxy.url);
    try {
      await settle();
      const payer = chain.wallet(3);
      await chain.mint(payer.address, usdc("20"));
      const fork = await chain.provider.send("evm_snapshot", []);
      await (chain.usdc.connect(payer) as Contract).getFunction("transfer")(a.address, usdc("10"));
      const refused = (await (chain.usdc.connect(payer) as Contract).getFunction("transfer")(b.address, usdc("10"))).hash as string;
      await chain.mine(CONFIRMATIONS);
      await settle();
      for (const c of [a, b]) expect(await getCharge(c.id)).toMatchObject({ status: "RECEIVED" });
      expect(await chain.provider.send("evm_revert", [fork])).toBe(true);
      await chain.mine(5);

      proxy.setFaults({ refuseTxHashes: [refused] });
      // The rollback's re-check settles the payment it could read; the next step fails on the other.
      expect((await indexer.step()).reorged).toBe(true);
      expect(await getCharge(a.id)).toMatchObject({ status: "PENDING", amountReceived: "0.00", needsReview: true });
      expect(await getCharge(b.id)).toMatchObject({ status: "RECEIVED", amountReceived: "10.00", needsReview: false });
      await expect(indexer.step()).rejects.toThrow();

      proxy.setFaults({});
      await settle();
      expect(await getCharge(b.id)).toMatchObject({ status: "PENDING", amountReceived: "0.00", needsReview: true });
      const rechecks = await app.db.prisma.reorgRecheck.findMany({ where: { transfer: { chargeId: { in: [a.id, b.id] } } } });
      expect(rechecks.map((r) => `${r.outcome} ${r.doneAt !== null}`)).toEqual(["reversed true", "reversed true"]);
    } finally {
      rpc.destroy();
    }
  }, 60_000);
});

// The last two move the chain's clock past their charges' expiry (the second by two hours).
describe("a payment a deep reorg takes away before any payout", () => {
  it("the RECEIVED charge is PENDING again and needs review; once the chain's clock passes expiresAt, it expires", async () => {
    // No worker: nothing pays the charge out. The indexer and the confirmations are driven by hand.
    const { id, address } = await charge("10");
    const rpc = new ChainRpc(devnet.chainId, [chain.anvil.url]);
    const indexer = new ChainIndexer(app.db.prisma, rpc, devnet, quiet, settings());
    const settle = async () => {
      let step = await indexer.step();
      while (step.behind) step = await indexer.step();
      await confirmChainMoney(app.db.prisma, settings(), devnet, step.tip);
    };
    try {
      await settle();
      const fork = await chain.provider.send("evm_snapshot", []);
      await chain.pay(chain.wallet(3), address, usdc("10"));
      await chain.mine(CONFIRMATIONS);
      await settle();
      expect(await getCharge(id)).toMatchObject({ status: "RECEIVED", amountReceived: "10.00", needsReview: false });

      expect(await chain.provider.send("evm_revert", [fork])).toBe(true);
      await chain.mine(5);
      await settle();
      const reopened = await getCharge(id);
      expect(reopened).toMatchObject({ status: "PENDING", amountReceived: "0.00", needsReview: true });
      expect(reopened.reviewReason).toMatch(/a reorg \d+ blocks deep .*payment of 10000000 base units .* no longer on chain; .*PENDING again/);
      expect(await eventTypes(id)).toEqual(["charge.pending", "charge.chain_selected", "charge.received", "charge.needs_review"]);
      const [needsReview] = await app.db.prisma.event.findMany({ where: { type: "charge.needs_review", data: { path: ["id"], equals: id } } });
      expect(needsReview!.data).toMatchObject({ status: "PENDING", amountReceived: "0.00" });
      // The buyer's page asks for the whole amount again, and the ledger agrees with the chain.
      expect((await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body).toMatchObject({ status: "PENDING", amountRemaining: "10.00" });
      expect((await reconcile()).differences).toEqual([]);

      // The chain's clock passes the charge's expiry: it expires as any PENDING charge does.
      const { expiresAt } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id } });
      await chain.provider.send("evm_setNextBlockTimestamp", [Math.floor(expiresAt.getTime() / 1000) + 60]);
      await chain.mine(CONFIRMATIONS + 1);
      await settle();
      const expired = await expireDueCharges(app.db.prisma, settings(), new Date(expiresAt.getTime() + 120_000));
      expect(expired.map((c) => c.id)).toContain(id);
      expect(await getCharge(id)).toMatchObject({ status: "EXPIRED", amountReceived: "0.00", needsReview: true });
      expect((await eventTypes(id)).slice(-1)).toEqual(["charge.expired"]);
    } finally {
      rpc.destroy();
    }
  }, 60_000);
});

describe("an on-time payment a deep reorg sends back to the mempool", () => {
  it("an on-time payment mined again after the charge's expiry is relocated: the charge never expires and completes", async () => {
    // Two hours to pay once the chain is picked: the clock jump below passes every charge made before.
    const { paymentWindowMinutes } = await app.db.prisma.merchant.findFirstOrThrow();
    await app.db.prisma.merchant.updateMany({ data: { paymentWindowMinutes: 120 } });
    const { id, address } = await charge("10").finally(() => app.db.prisma.merchant.updateMany({ data: { paymentWindowMinutes } }));
    const { rpc, settle } = byHand();
    try {
      const { expiresAt } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id } });
      // The chain that replaces the payment's blocks runs past the charge's expiry.
      const late = Math.floor(expiresAt.getTime() / 1000) + 60;
      const { hash, raw } = await paymentReorgedOut(id, address, settle, late);
      await chain.automine(false);
      expect(await chain.provider.send("eth_sendRawTransaction", [raw])).toBe(hash);
      // Rolled back and read on: the new blocks' confirmations put the chain's clock past expiresAt,
      // yet what expires charges finds nothing to do with this one.
      await settle();
      const cursor = await app.db.prisma.chainCursor.findUniqueOrThrow({ where: { chainId: devnet.chainId } });
      expect(cursor.confirmedTime!.getTime()).toBeGreaterThan(expiresAt.getTime());
      expect((await expireDueCharges(app.db.prisma, settings(), new Date(expiresAt.getTime() + 120_000))).map((c) => c.id)).not.toContain(id);
      expect(await getCharge(id)).toMatchObject({ status: "RECEIVED", amountReceived: "10.00", needsReview: false });

      // Mined again, a block later: the same transfer, moved.
      await chain.mine(1);
      const receipt = await chain.provider.getTransactionReceipt(hash);
      expect(receipt?.status).toBe(1);
      await settle();
      const [recheck] = await app.db.prisma.reorgRecheck.findMany({ where: { transfer: { chargeId: id } }, include: { transfer: true } });
      expect(recheck).toMatchObject({ outcome: "reincluded", transfer: { status: "CONFIRMED", blockNumber: BigInt(receipt!.blockNumber) } });
    } finally {
      await chain.automine(true);
      rpc.destroy();
    }
    startRunner();
    producing = true;
    await until("the charge completed", id, (c) => c.status === "COMPLETED");
    const types = await eventTypes(id);
    expect(types).not.toContain("charge.expired");
    expect(types).not.toContain("charge.needs_review");
    expect(await getCharge(id)).toMatchObject({ amountReceived: "10.00", needsReview: false });
  }, 60_000);
});
