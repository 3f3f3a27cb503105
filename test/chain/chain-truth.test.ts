// Money from what the chain did, on Circle's real USDC: anyone may flush a clone, bots send dust,
// the token's issuer blacklists and pauses. The charge follows the chain whoever acted, the relayer
// never pays for a flush that cannot pay, and the money is never anywhere but the clone, the
// merchant's wallet and the fee recipient.
import { Contract, formatUnits, parseUnits, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChargeCloneArtifact } from "../../src/chain/artifacts.js";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic | null = null;

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(CONFIRMATIONS);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, logger, {
    intervalMs: 50,
    settings: { ...SETTINGS, feed: app.live },
    bumpAfterMs: 60_000,
    blockedRecheckMs: 300,
  });
  startProducer();
}, 60_000);
afterEach(async () => {
  startProducer();
  await chain.automine(true);
});
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

/** A block every 100 ms, so confirmations come. */
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

let seq = 0;
/** A charge with its chain picked and its clone deployed. */
async function payableCharge(amount: string, key = app.testKey): Promise<{ id: string; clone: string }> {
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `truth-${++seq}`, amount }, key })).body;
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  await waitFor("the clone's deployment", async () => (await getCharge(charge.id, key)).deployedAt !== null);
  return { id: charge.id, clone: picked.body.cloneAddress };
}
const getCharge = async (id: string, key = app.testKey) => (await app.call("GET", `/v1/charges/${id}`, { key })).body;
const until = (what: string, id: string, check: (c: any) => boolean, key = app.testKey, timeoutMs = 30_000) =>
  waitFor(
    what,
    async () => {
      const c = await getCharge(id, key);
      return check(c) ? c : undefined;
    },
    timeoutMs,
  );
const eventsOf = async (id: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map((e) => ({
    type: e.type,
    data: e.data as any,
  }));
const relayerNonce = () => chain.provider.getTransactionCount(chain.deployer.address, "latest");
const flushOf = (clone: string, runner: Wallet) => new Contract(clone, ChargeCloneArtifact.abi, runner).getFunction("flush");
const usdcAddress = () => chain.usdc.getAddress();
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("settlements by anyone", () => {
  it("a stranger's flush right after the payment completes the charge exactly as ours would, and the relayer sends nothing", async () => {
    const { id, clone } = await payableCharge("5");
    const stranger = chain.wallet(5);
    const before = await chain.balance(WALLET);
    const nonce = await relayerNonce();
    const started = new Date();
    // The payment, and in the very next block (long before its confirmations) a stranger's flush.
    // Blocks are mined by hand here: an empty block between the two would let the payment confirm
    // first, and then a flush of ours racing the stranger's is right (the next test covers that).
    stopProducer();
    await chain.automine(false);
    await chain.pay(chain.wallet(3), clone, usdc("5"));
    await chain.mine();
    const flush = await flushOf(clone, stranger)(await usdcAddress(), { gasLimit: 200_000 });
    await chain.mine();
    await flush.wait();
    await chain.automine(true);
    startProducer();

    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "5.00", feeAmount: "0.05", netAmount: "4.95", flushTxHash: flush.hash, payoutBlockedReason: null });
    expect(done.completedAt).not.toBeNull();
    expect(done.settlements).toEqual([
      { txHash: flush.hash, blockNumber: expect.any(Number), amount: "5.00", netAmount: "4.95", feeAmount: "0.05", confirmedAt: expect.stringMatching(/Z$/) },
    ]);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(["charge.pending", "charge.chain_selected", "charge.received", "charge.completed"]);
    expect(events[3]!.data).toMatchObject({ status: "COMPLETED", flushTxHash: flush.hash, feeAmount: "0.05", netAmount: "4.95", overpaidAmount: "0.00" });
    expect((await chain.balance(WALLET)) - before).toBe(usdc("4.95"));

    // Many blocks later: not one flush of ours, empty or not.
    await waitFor("20 more blocks", async () => (await chain.provider.getBlockNumber()) > (await flush.wait())!.blockNumber + 20);
    expect(await relayerNonce()).toBe(nonce);
    expect(await chain.flushCount(clone)).toBe(1);
    expect(await app.db.prisma.relayerTransaction.count({ where: { kind: "FLUSH", createdAt: { gte: started } } })).toBe(0);
  });

  it("a stranger's partial flush, then the rest paid and flushed by us: both settlements, COMPLETED once", async () => {
    const { id, clone } = await payableCharge("25");
    const before = await chain.balance(WALLET);
    await chain.pay(chain.wallet(3), clone, usdc("10"));
    await until("the partial payment", id, (c) => c.amountReceived === "10.00");
    const theirs = await flushOf(clone, chain.wallet(5))(await usdcAddress());
    await theirs.wait();
    const partial = await until("the partial payout", id, (c) => c.settlements.length === 1);
    expect(partial).toMatchObject({ status: "PENDING", amountReceived: "10.00", feeAmount: "0.10", netAmount: "9.90", flushTxHash: theirs.hash });

    await chain.pay(chain.wallet(4), clone, usdc("15"));
    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "25.00", feeAmount: "0.25", netAmount: "24.75" });
    expect(done.settlements.map((s: any) => s.amount)).toEqual(["10.00", "15.00"]);
    expect(done.settlements[0].txHash).toBe(theirs.hash);
    // The settlement that completed the charge is ours, and it is the one the charge names.
    // (Our flush no longer names the charge once it is confirmed: find it by the hash the charge names.)
    await app.db.prisma.relayerTransaction.findFirstOrThrow({ where: { kind: "FLUSH", txHashes: { has: done.flushTxHash } } });
    expect(done.settlements[1].txHash).toBe(done.flushTxHash);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "charge.pending",
      "charge.chain_selected",
      "charge.partial",
      "charge.payout_confirmed",
      "charge.received",
      "charge.completed",
    ]);
    expect((await chain.balance(WALLET)) - before).toBe(usdc("24.75"));
    expect(await chain.balance(clone)).toBe(0n);
  });

  it("a stranger's flush raced into the same block as ours: one settlement, ours a harmless no-op, no failure counted", async () => {
    const { id, clone } = await payableCharge("7");
    stopProducer();
    await chain.automine(false);
    await chain.pay(chain.wallet(3), clone, usdc("7"));
    await chain.mine(CONFIRMATIONS + 1);
    // Confirmed and RECEIVED: our flush is signed, stored and broadcast into the mempool.
    const ours = await waitFor("our flush in the mempool", async () => {
      const tx = await app.db.prisma.relayerTransaction.findFirst({ where: { kind: "FLUSH", charges: { some: { id } } } });
      return tx && (await chain.provider.getTransaction(tx.txHashes[0]!)) ? tx : undefined;
    });
    // A stranger outbids it into the same block.
    const theirs = await flushOf(clone, chain.wallet(5))(await usdcAddress(), {
      gasLimit: 200_000,
      maxPriorityFeePerGas: parseUnits("50", "gwei"),
      maxFeePerGas: parseUnits("100", "gwei"),
    });
    await chain.mine();
    const [a, b] = await Promise.all([chain.provider.getTransactionReceipt(theirs.hash), chain.provider.getTransactionReceipt(ours.txHashes[0]!)]);
    expect(a!.blockNumber).toBe(b!.blockNumber);
    expect(a!.index).toBeLessThan(b!.index);
    // Theirs paid out; ours found the clone empty and did nothing, successfully.
    expect([a!.status, a!.logs.length, b!.status, b!.logs.length]).toEqual([1, 3, 1, 0]);
    await chain.automine(true);
    startProducer();

    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ flushTxHash: theirs.hash, feeAmount: "0.07", netAmount: "6.93", payoutBlockedReason: null });
    expect(done.settlements).toHaveLength(1);
    await waitFor(
      "our flush confirmed",
      async () => (await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: ours.id } })).status === "CONFIRMED",
    );
    const row = await app.db.prisma.charge.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ flushFailures: 0, flushId: null, payoutBlockedReason: null });
    expect(await chain.flushCount(clone)).toBe(1);
    expect((await eventsOf(id)).filter((e) => e.type === "charge.completed")).toHaveLength(1);
  });
});

describe("dust and cancel", () => {
  it("dust is counted but does not extend expiry; 1% or more does", async () => {
    const { id, clone } = await payableCharge("25");
    const expiresAt = Date.parse((await getCharge(id)).expiresAt);
    await chain.pay(chain.wallet(3), clone, usdc("0.2")); // under 1% of 25
    const dusted = await until("the dust counted", id, (c) => c.amountReceived === "0.20");
    expect(Date.parse(dusted.expiresAt)).toBe(expiresAt);
    await chain.pay(chain.wallet(3), clone, usdc("1"));
    const partial = await until("the partial payment", id, (c) => c.amountReceived === "1.20");
    expect(Date.parse(partial.expiresAt) - Math.max(expiresAt, Date.now() - 5_000)).toBeGreaterThanOrEqual(15 * 60_000 - 5_000);
    expect(Date.parse(partial.expiresAt) - expiresAt).toBeLessThanOrEqual(15 * 60_000 + 5_000);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(["charge.pending", "charge.chain_selected", "charge.partial", "charge.partial"]);
  });

  it("DELETE waits (409) while a payment confirms, then cancels with the confirmed money and pays it out", async () => {
    const { id, clone } = await payableCharge("25");
    const before = await chain.balance(WALLET);
    stopProducer();
    await chain.pay(chain.wallet(3), clone, usdc("10"));
    await waitFor("the payment seen", async () => (await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body.payments.length === 1);
    const refused = await app.call("DELETE", `/v1/charges/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "charge_payment_confirming", param: "id" });
    expect((await getCharge(id)).status).toBe("PENDING");
    startProducer();

    await until("the payment confirmed", id, (c) => c.amountReceived === "10.00");
    const cancelled = await app.call("DELETE", `/v1/charges/${id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "CANCELLED", amountReceived: "10.00" });
    const paid = await until("the payout", id, (c) => c.settlements.length === 1);
    expect(paid).toMatchObject({ status: "CANCELLED", feeAmount: "0.10", netAmount: "9.90" });
    expect((await chain.balance(WALLET)) - before).toBe(usdc("9.90"));
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(["charge.pending", "charge.chain_selected", "charge.partial", "charge.cancelled", "charge.payout_confirmed"]);
    expect(events[3]!.data).toMatchObject({ status: "CANCELLED", amountReceived: "10.00" });
  });
});

describe("Circle's USDC", () => {
  it("2^128 base units: counted, completed and paid out to the unit", async () => {
    const { id, clone } = await payableCharge("25");
    const before = { merchant: await chain.balance(WALLET), fee: await chain.balance(chain.feeRecipient) };
    const amount = 2n ** 128n;
    await chain.pay(chain.wallet(3), clone, amount);
    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
    const fee = (amount * 100n) / 10_000n;
    const decimal = (units: bigint) => formatUnits(units, 6).replace(/\.0$/, ".00");
    expect(done).toMatchObject({ amountReceived: decimal(amount), feeAmount: decimal(fee), netAmount: decimal(amount - fee) });
    expect(done.amountReceived).toBe("340282366920938463463374607431768.211456");
    expect((await chain.balance(WALLET)) - before.merchant).toBe(amount - fee);
    expect((await chain.balance(chain.feeRecipient)) - before.fee).toBe(fee);
    const completed = (await eventsOf(id)).find((e) => e.type === "charge.completed")!;
    expect(completed.data.overpaidAmount).toBe(decimal(amount - usdc("25")));
  });

  it("a blacklisted merchant wallet: blocked once, nothing sent, the money waits in the clone and is paid out when unblacklisted", async () => {
    const wallet = Wallet.createRandom().address;
    const merchant = await createMerchant(app.db.prisma, { name: "Blocked Shop", testWallet: wallet }, { feeBps: 100 });
    const key = merchant.apiKeys.test.secret;
    await (await chain.usdc.getFunction("blacklist")(wallet)).wait();
    const { id, clone } = await payableCharge("25", key);
    try {
      const nonce = await relayerNonce();
      await chain.pay(chain.wallet(3), clone, usdc("25"));
      const blocked = await until("the payout blocked", id, (c) => c.payoutBlockedReason === "wallet_blacklisted", key);
      expect(blocked.status).toBe("RECEIVED");
      // Many rechecks later (every 300 ms here): still one event, no transaction, the money in place.
      await settle(2_000);
      expect(await relayerNonce()).toBe(nonce);
      expect(await chain.balance(clone)).toBe(usdc("25"));
      expect((await eventsOf(id)).filter((e) => e.type === "charge.payout_blocked")).toHaveLength(1);
    } finally {
      await (await chain.usdc.getFunction("unBlacklist")(wallet)).wait();
    }
    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED", key);
    expect(done).toMatchObject({ payoutBlockedReason: null, netAmount: "24.75" });
    expect(await chain.balance(wallet)).toBe(usdc("24.75"));
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "charge.pending",
      "charge.chain_selected",
      "charge.received",
      "charge.payout_blocked",
      "charge.completed",
    ]);
  });

  it("a blacklisted clone: clone_blacklisted until it is lifted", async () => {
    const { id, clone } = await payableCharge("3");
    await chain.pay(chain.wallet(3), clone, usdc("3"));
    await (await chain.usdc.getFunction("blacklist")(clone)).wait();
    try {
      await until("the payout blocked", id, (c) => c.payoutBlockedReason === "clone_blacklisted");
      expect(await chain.balance(clone)).toBe(usdc("3"));
    } finally {
      await (await chain.usdc.getFunction("unBlacklist")(clone)).wait();
    }
    expect(await until("COMPLETED", id, (c) => c.status === "COMPLETED")).toMatchObject({ payoutBlockedReason: null, netAmount: "2.97" });
  });

  it("a blacklisted payer cannot pay: nothing reaches the clone, nothing is recorded", async () => {
    const { id, clone } = await payableCharge("3");
    const payer = chain.wallet(6);
    await chain.mint(payer.address, usdc("3"));
    await (await chain.usdc.getFunction("blacklist")(payer.address)).wait();
    try {
      await expect((chain.usdc.connect(payer) as Contract).getFunction("transfer")(clone, usdc("3"))).rejects.toThrow(/blacklisted/);
      await settle(500);
      expect(await getCharge(id)).toMatchObject({ status: "PENDING", amountReceived: null });
      expect(await app.db.prisma.payment.count({ where: { chargeId: id } })).toBe(0);
    } finally {
      await (await chain.usdc.getFunction("unBlacklist")(payer.address)).wait();
    }
  });

  it("a paused token: payouts wait (token_paused) and resume once it is unpaused", async () => {
    const { id, clone } = await payableCharge("4");
    const nonce = await relayerNonce();
    // Paused in the block after the payment's, before it can confirm (blocks mined by hand).
    stopProducer();
    await chain.automine(false);
    await chain.pay(chain.wallet(3), clone, usdc("4"));
    await chain.mine();
    const pause = await chain.usdc.getFunction("pause")();
    await chain.mine();
    await pause.wait();
    await chain.automine(true);
    startProducer();
    try {
      await until("the payout waiting", id, (c) => c.payoutBlockedReason === "token_paused");
      await settle(1_000);
      expect(await relayerNonce()).toBe(nonce);
      expect(await chain.balance(clone)).toBe(usdc("4"));
    } finally {
      await (await chain.usdc.getFunction("unpause")()).wait();
    }
    expect(await until("COMPLETED", id, (c) => c.status === "COMPLETED")).toMatchObject({ payoutBlockedReason: null, netAmount: "3.96" });
  });
});
