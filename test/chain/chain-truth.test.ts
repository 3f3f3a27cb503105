// Money from what the chain did, on Circle's real USDC: anyone may flush a clone, bots send dust,
// the token's issuer blacklists and pauses. The charge follows the chain whoever acted, the relayer
// never pays for a flush that cannot pay, and the money is never anywhere but the clone, the
// merchant's wallet and the fee recipient.
import { Contract, formatUnits, parseUnits, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { payoutWords } from "../../src/chain/clones.js";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { blockProducer, payoutLookedAgain, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: ChainRunner | null = null;

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
/** A charge with its chain picked (its address gets code with its first payout). */
async function payableCharge(amount: string, key = app.testKey): Promise<{ id: string; clone: string; wallet: string }> {
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `truth-${++seq}`, amount }, key })).body;
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  const { settlementWallet } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: charge.id } });
  return { id: charge.id, clone: picked.body.cloneAddress, wallet: settlementWallet };
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
/** A stranger's payout of a charge's whole balance through the factory (anyone may: deploying the clone if need be). */
const strangerPayout = (charge: { id: string; wallet: string }, runner: Wallet, overrides: object = {}) =>
  (chain.factory.connect(runner) as Contract).getFunction("payout")(
    chain.usdc.target,
    payoutWords({ chargeId: charge.id, wallet: charge.wallet, feeBps: 100, amount: 0n, deployed: false }),
    overrides,
  );
const usdcAddress = () => chain.usdc.getAddress();

describe("settlements by anyone", () => {
  it("a stranger's flush right after the payment completes the charge exactly as ours would, and the relayer sends nothing", async () => {
    const charge = await payableCharge("5");
    const { id, clone } = charge;
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
    const flush = await strangerPayout(charge, stranger, { gasLimit: 300_000 });
    await chain.mine();
    await flush.wait();
    await chain.automine(true);
    startProducer();

    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "5.00", feeAmount: "0.05", netAmount: "4.95", flushTxHash: flush.hash, payoutBlockedReason: null });
    expect(done.completedAt).not.toBeNull();
    expect(done.settlements).toEqual([
      {
        txHash: flush.hash,
        chainId: devnet.chainId,
        blockNumber: expect.any(Number),
        amount: "5.00",
        netAmount: "4.95",
        feeAmount: "0.05",
        confirmedAt: expect.stringMatching(/Z$/),
      },
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
    const charge = await payableCharge("25");
    const { id, clone } = charge;
    const before = await chain.balance(WALLET);
    await chain.pay(chain.wallet(3), clone, usdc("10"));
    await until("the partial payment", id, (c) => c.amountReceived === "10.00");
    const theirs = await strangerPayout(charge, chain.wallet(5));
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
    const charge = await payableCharge("7");
    const { id, clone } = charge;
    stopProducer();
    await chain.automine(false);
    await chain.pay(chain.wallet(3), clone, usdc("7"));
    await chain.mine(CONFIRMATIONS + 1);
    // Confirmed and RECEIVED: our flush is signed, stored and broadcast into the mempool.
    const ours = await waitFor("our flush in the mempool", async () => {
      const tx = await app.db.prisma.relayerTransaction.findFirst({ where: { kind: "FLUSH", clones: { some: { chargeId: id } } } });
      return tx && (await chain.provider.getTransaction(tx.txHashes[0]!)) ? tx : undefined;
    });
    // A stranger outbids it into the same block.
    const theirs = await strangerPayout(charge, chain.wallet(5), {
      gasLimit: 300_000,
      maxPriorityFeePerGas: parseUnits("50", "gwei"),
      maxFeePerGas: parseUnits("100", "gwei"),
    });
    await chain.mine();
    const [a, b] = await Promise.all([chain.provider.getTransactionReceipt(theirs.hash), chain.provider.getTransactionReceipt(ours.txHashes[0]!)]);
    expect(a!.blockNumber).toBe(b!.blockNumber);
    expect(a!.index).toBeLessThan(b!.index);
    // Theirs paid out; ours found the clone empty and did nothing, successfully.
    expect([a!.status, a!.logs.length, b!.status, b!.logs.length]).toEqual([1, 2, 1, 0]);
    await chain.automine(true);
    startProducer();

    const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ flushTxHash: theirs.hash, feeAmount: "0.07", netAmount: "6.93", payoutBlockedReason: null });
    expect(done.settlements).toHaveLength(1);
    await waitFor(
      "our flush confirmed",
      async () => (await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: ours.id } })).status === "CONFIRMED",
    );
    const row = await app.db.prisma.clone.findUniqueOrThrow({ where: { chargeId_chainId: { chargeId: id, chainId: devnet.chainId } } });
    expect(row).toMatchObject({ flushFailures: 0, flushId: null, payoutBlockedReason: null, held: expect.anything() });
    expect(row.held.toFixed()).toBe("0");
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

describe("dust below PAYOUT_MIN_AMOUNT (0.01)", () => {
  it("seen and unconfirmed, it does not hold off a cancel; confirmed, it waits in the clone (no gas spent on it)", async () => {
    const { id, clone } = await payableCharge("25");
    stopProducer();
    await chain.pay(chain.wallet(3), clone, 1n);
    await waitFor("the dust seen", async () => (await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body.payments.length === 1);
    const cancelled = await app.call("DELETE", `/v1/charges/${id}`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe("CANCELLED");
    const nonce = await relayerNonce();
    startProducer();
    await until("the dust confirmed", id, (c) => c.amountReceived === "0.000001" && c.status === "CANCELLED");
    await runnerPassed(runner!, chain.provider);
    expect(await relayerNonce()).toBe(nonce);
    expect(await chain.provider.getCode(clone)).toBe("0x");
    expect(await chain.balance(clone)).toBe(1n);
  });

  it("after COMPLETED, it waits for more: paid out only once the clone holds the minimum", async () => {
    const { id, clone } = await payableCharge("2");
    await chain.pay(chain.wallet(3), clone, usdc("2"));
    await until("the charge completed", id, (c) => c.status === "COMPLETED" && c.flushTxHash !== null);
    const nonce = await relayerNonce();
    await chain.pay(chain.wallet(3), clone, usdc("0.005"));
    await waitFor("the late dust counted", async () => (await eventsOf(id)).some((e) => e.type === "charge.late_payment"));
    await runnerPassed(runner!, chain.provider);
    expect(await relayerNonce()).toBe(nonce);
    expect(await chain.balance(clone)).toBe(usdc("0.005"));
    await chain.pay(chain.wallet(3), clone, usdc("0.005"));
    const paid = await until("the late money paid out", id, (c) => c.netAmount === "1.9899");
    expect(paid).toMatchObject({ amountReceived: "2.01", feeAmount: "0.0201" });
    expect(await chain.balance(clone)).toBe(0n);
    expect(await relayerNonce()).toBe(nonce + 1);
  });
});

describe("a chain's payout minimum (the registry's, or CHAIN_<id>_PAYOUT_MIN_AMOUNT)", () => {
  it("money that completes no charge waits below the chain's minimum and is paid out once the clone holds it; a sale below the minimum is paid out at once", async () => {
    await runner?.stop();
    runner = startChainRunner(app.db, { ...devnet, payoutMinAmount: usdc("1") }, logger, {
      intervalMs: 50,
      settings: { ...SETTINGS, feed: app.live },
      bumpAfterMs: 60_000,
      blockedRecheckMs: 300,
    });
    try {
      const { id, clone } = await payableCharge("0.50");
      await chain.pay(chain.wallet(3), clone, usdc("0.50"));
      await until("the sale paid out", id, (c) => c.status === "COMPLETED" && c.netAmount === "0.495");
      const nonce = await relayerNonce();
      await chain.pay(chain.wallet(3), clone, usdc("0.60"));
      await waitFor("the late money counted", async () => (await eventsOf(id)).some((e) => e.type === "charge.late_payment"));
      await runnerPassed(runner!, chain.provider);
      expect(await relayerNonce()).toBe(nonce);
      expect(await chain.balance(clone)).toBe(usdc("0.60"));
      await chain.pay(chain.wallet(3), clone, usdc("0.40"));
      const paid = await until("the late money paid out", id, (c) => c.netAmount === "1.485");
      expect(paid).toMatchObject({ amountReceived: "1.50", feeAmount: "0.015" });
      expect(await chain.balance(clone)).toBe(0n);
      expect(await relayerNonce()).toBe(nonce + 1);
    } finally {
      await runner?.stop();
      runner = startChainRunner(app.db, devnet, logger, {
        intervalMs: 50,
        settings: { ...SETTINGS, feed: app.live },
        bumpAfterMs: 60_000,
        blockedRecheckMs: 300,
      });
    }
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

  it("a blacklisted fee recipient never holds the merchant up: the charge completes, the fee waits in the factory until withdrawn", async () => {
    const { id, clone } = await payableCharge("10");
    const factory = await chain.factory.getAddress();
    const before = { merchant: await chain.balance(WALLET), factory: await chain.balance(factory), fee: await chain.balance(chain.feeRecipient) };
    await (await chain.usdc.getFunction("blacklist")(chain.feeRecipient)).wait();
    try {
      await chain.pay(chain.wallet(3), clone, usdc("10"));
      const done = await until("COMPLETED", id, (c) => c.status === "COMPLETED");
      expect(done).toMatchObject({ netAmount: "9.90", feeAmount: "0.10", payoutBlockedReason: null });
      expect((await chain.balance(WALLET)) - before.merchant).toBe(usdc("9.9"));
      expect((await chain.balance(factory)) - before.factory).toBe(usdc("0.1"));
      expect(await chain.balance(chain.feeRecipient)).toBe(before.fee);
      expect((await eventsOf(id)).map((e) => e.type)).not.toContain("charge.payout_blocked");
    } finally {
      await (await chain.usdc.getFunction("unBlacklist")(chain.feeRecipient)).wait();
    }
    // Anyone may send the fees the factory holds on to the fee recipient, once it can receive.
    await (await (chain.factory.connect(chain.wallet(7)) as Contract).getFunction("withdrawFees")(await usdcAddress())).wait();
    expect((await chain.balance(chain.feeRecipient)) - before.fee).toBeGreaterThanOrEqual(usdc("0.1"));
    expect(await chain.balance(factory)).toBe(0n);
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
      await payoutLookedAgain(app.db.prisma, id, 4);
      await runnerPassed(runner!, chain.provider);
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
      await runnerPassed(runner!, chain.provider);
      expect(await getCharge(id)).toMatchObject({ status: "PENDING", amountReceived: null });
      expect(await app.db.prisma.chainTransfer.count({ where: { chargeId: id } })).toBe(0);
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
      await payoutLookedAgain(app.db.prisma, id, 2);
      await runnerPassed(runner!, chain.provider);
      expect(await relayerNonce()).toBe(nonce);
      expect(await chain.balance(clone)).toBe(usdc("4"));
    } finally {
      await (await chain.usdc.getFunction("unpause")()).wait();
    }
    expect(await until("COMPLETED", id, (c) => c.status === "COMPLETED")).toMatchObject({ payoutBlockedReason: null, netAmount: "3.96" });
  });
});
