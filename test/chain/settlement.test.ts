// The indexer and settlement on a real anvil: payments are seen, confirmed, paid out to the merchant
// and the fee recipient (the clone deployed by that payout), and the charge completes, whatever the
// shape of the payment.
import { parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import type { PaymentSettings } from "../../src/domain/payments.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { blockProducer, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: ChainRunner | null = null;
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(CONFIRMATIONS);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  startRunner();
}, 60_000);
afterEach(() => startProducer());
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

function startRunner(settings: Partial<PaymentSettings> = {}) {
  runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live, ...settings }, bumpAfterMs: 60_000 });
}
/** A block every 100 ms, so confirmations come. */
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

let seq = 0;
/** A charge with its chain picked (its address has no code until its first payout). */
async function payableCharge(amount = "25"): Promise<{ id: string; clone: string }> {
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `settle-${++seq}`, amount } })).body;
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  expect(picked.status, JSON.stringify(picked.body)).toBe(200);
  return { id: charge.id, clone: picked.body.cloneAddress };
}
const paymentsOf = (chargeId: string) => app.db.prisma.chainTransfer.findMany({ where: { chargeId, kind: "PAYMENT", status: { not: "REVERSED" } } });
/** Expires `id` now, whatever the chain's clock says (as the test helper does). */
const expireNow = (id: string) => expireDueCharges(app.db.prisma, SETTINGS, new Date(Date.now() + 3_600_000), { only: id, force: true });
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
const publicView = async (id: string) => (await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body;
const untilStatus = (id: string, status: string) =>
  waitFor(`charge ${id} to be ${status}`, async () => {
    const c = await getCharge(id);
    return c.status === status && (status !== "COMPLETED" || c.flushTxHash !== null) ? c : undefined;
  });
const eventsOf = async (id: string) =>
  (await app.db.prisma.event.findMany({ orderBy: { createdAt: "asc" } })).filter((e) => (e.data as { id: string }).id === id);
const balances = async () => ({ merchant: await chain.balance(WALLET), fee: await chain.balance(chain.feeRecipient) });

describe("settlement", () => {
  beforeAll(() => startProducer());

  it("live: subscribers see PENDING → RECEIVED → COMPLETED, and the hosted page each confirmation", async () => {
    const { id, clone } = await payableCharge("25");
    const merchant = wsClient(app.url, app.testKey);
    const buyer = wsClient(app.url);
    const updates = subscribe(merchant, `subscription($id: ID!) { chargeUpdated(id: $id) { status amountReceived flushTxHash } }`, { id });
    const session = subscribe(
      buyer,
      `subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { status amountRemaining amountPending payments { status confirmations } } }`,
      { id },
    );
    await updates.waitFor(1);
    await session.waitFor(1);
    // No new blocks for a moment: the buyer's page shows the payment seen, with 1 of 2 confirmations.
    stopProducer();
    await chain.pay(chain.wallet(4), clone, usdc("25"));
    await waitFor("the payment seen", async () => session.values.at(-1)?.paymentSessionUpdated.payments.length === 1);
    startProducer();
    await untilStatus(id, "COMPLETED");
    await waitFor("the COMPLETED update", async () => updates.values.at(-1)?.chargeUpdated.status === "COMPLETED");
    const statuses = updates.values.map((v) => v.chargeUpdated.status);
    expect(statuses).toEqual(["PENDING", "RECEIVED", "COMPLETED"]);
    expect(updates.values.at(-1).chargeUpdated).toMatchObject({ amountReceived: "25.00", flushTxHash: expect.stringMatching(/^0x/) });
    await waitFor("the session's COMPLETED", async () => session.values.at(-1)?.paymentSessionUpdated.status === "COMPLETED");
    const views = session.values.map((v) => v.paymentSessionUpdated);
    // Seen first (waiting for confirmations, counted nowhere yet), then confirmed and counted.
    expect(views.find((v) => v.payments[0]?.status === "pending")).toMatchObject({
      amountRemaining: "25.00",
      amountPending: "25.00",
      payments: [{ confirmations: 1 }],
    });
    expect(views.at(-1)).toMatchObject({ amountRemaining: "0.00", amountPending: "0.00", payments: [{ status: "confirmed" }] });
    expect(views.at(-1).payments[0].confirmations).toBeGreaterThanOrEqual(CONFIRMATIONS);
    await Promise.all([merchant.dispose(), buyer.dispose()]);
  });

  it("a full payment: RECEIVED, flushed, COMPLETED; the merchant and fee recipient get the exact split", async () => {
    const { id, clone } = await payableCharge("25");
    const before = await balances();
    const tx = await chain.pay(chain.wallet(3), clone, usdc("25"));
    const done = await untilStatus(id, "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "25.00", feeAmount: "0.25", netAmount: "24.75" });
    expect(done.completedAt).not.toBeNull();
    const after = await balances();
    expect(after.merchant - before.merchant).toBe(usdc("24.75"));
    expect(after.fee - before.fee).toBe(usdc("0.25"));
    expect(await chain.balance(clone)).toBe(0n);
    expect(await chain.flushCount(clone)).toBe(1);
    const receipt = await chain.provider.getTransactionReceipt(done.flushTxHash);
    expect(receipt?.status).toBe(1);

    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(["charge.pending", "charge.chain_selected", "charge.received", "charge.completed"]);
    expect(events[2]!.data).toMatchObject({ status: "RECEIVED", amountReceived: "25.00", payments: [{ txHash: tx, amount: "25.00", status: "confirmed" }] });
    expect(events[3]!.data).toMatchObject({ status: "COMPLETED", overpaidAmount: "0.00", flushTxHash: done.flushTxHash });
    const view = await publicView(id);
    expect(view).toMatchObject({ status: "COMPLETED", amountReceived: "25.00", amountRemaining: "0.00", amountPending: "0.00" });
    expect(view.payments).toEqual([expect.objectContaining({ txHash: tx, amount: "25.00", status: "confirmed" })]);
  });

  it("a partial payment keeps the charge PENDING and extends its expiry; a top-up completes it", async () => {
    const { id, clone } = await payableCharge("25");
    const expiresAt = Date.parse((await getCharge(id)).expiresAt);
    await chain.pay(chain.wallet(3), clone, usdc("10"));
    const partial = await waitFor("the partial payment", async () => {
      const c = await getCharge(id);
      return c.amountReceived === "10.00" ? c : undefined;
    });
    expect(partial.status).toBe("PENDING");
    expect(Date.parse(partial.expiresAt) - expiresAt).toBeGreaterThanOrEqual(15 * 60_000 - 1000);
    expect(await publicView(id)).toMatchObject({ amountReceived: "10.00", amountRemaining: "15.00" });
    expect(await chain.flushCount(clone)).toBe(0);

    await chain.pay(chain.wallet(4), clone, usdc("15"));
    const done = await untilStatus(id, "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "25.00", feeAmount: "0.25", netAmount: "24.75" });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "charge.pending",
      "charge.chain_selected",
      "charge.partial",
      "charge.received",
      "charge.completed",
    ]);
    expect(await chain.flushCount(clone)).toBe(1);
  });

  it("an overpayment completes, flushes everything and reports the excess", async () => {
    const { id, clone } = await payableCharge("25");
    await chain.pay(chain.wallet(3), clone, usdc("30"));
    const done = await untilStatus(id, "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "30.00", feeAmount: "0.30", netAmount: "29.70" });
    const completed = (await eventsOf(id)).find((e) => e.type === "charge.completed")!;
    expect(completed.data).toMatchObject({ overpaidAmount: "5.00" });
  });

  it("money within the underpayment tolerance the charge was created with completes it, with underpaidAmount; less stays partial", async () => {
    const merchantId = app.merchant.merchant.id;
    await app.db.prisma.merchant.update({ where: { id: merchantId }, data: { underpaymentToleranceBps: 100 } });
    const within = await payableCharge("25");
    const short = await payableCharge("25");
    // A later change of the setting does not move the charges already made.
    await app.db.prisma.merchant.update({ where: { id: merchantId }, data: { underpaymentToleranceBps: 0 } });
    await chain.pay(chain.wallet(3), within.clone, usdc("24.80"));
    await chain.pay(chain.wallet(3), short.clone, usdc("24.70"));
    const done = await untilStatus(within.id, "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "24.80", feeAmount: "0.248", netAmount: "24.552" });
    const events = await eventsOf(within.id);
    expect(events.find((e) => e.type === "charge.received")!.data).toMatchObject({ underpaidAmount: "0.20" });
    expect(events.find((e) => e.type === "charge.completed")!.data).toMatchObject({ underpaidAmount: "0.20", overpaidAmount: "0.00" });
    await waitFor("the short charge's partial payment", async () => (await getCharge(short.id)).amountReceived === "24.70");
    expect((await getCharge(short.id)).status).toBe("PENDING");
    expect((await eventsOf(short.id)).map((e) => e.type)).toContain("charge.partial");
    // Cancelled, its money is paid out now, not during a later test that counts the merchant's balance.
    expect((await app.call("DELETE", `/v1/charges/${short.id}`)).body.status).toBe("CANCELLED");
    await waitFor("the short charge's payout", async () => (await getCharge(short.id)).netAmount === "24.453");
  });

  it("two payments in one block are both counted, once", async () => {
    const { id, clone } = await payableCharge("20");
    stopProducer();
    await chain.automine(false);
    try {
      const a = await chain.pay(chain.wallet(3), clone, usdc("12"));
      const b = await chain.pay(chain.wallet(4), clone, usdc("8"));
      await chain.mine();
      const [ra, rb] = await Promise.all([chain.provider.getTransactionReceipt(a), chain.provider.getTransactionReceipt(b)]);
      expect(ra!.blockNumber).toBe(rb!.blockNumber);
    } finally {
      await chain.automine(true);
    }
    startProducer();
    const done = await untilStatus(id, "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "20.00", feeAmount: "0.20", netAmount: "19.80" });
    expect(await paymentsOf(id)).toHaveLength(2);
    expect(await chain.flushCount(clone)).toBe(1);
  });

  it("a pick sends nothing: the address has no code until the payout deploys it, in the payout's own transaction", async () => {
    const nonce = await chain.provider.getTransactionCount(chain.deployer.address);
    const { id, clone } = await payableCharge("25");
    await chain.mine(5);
    expect(await chain.provider.getCode(clone)).toBe("0x");
    expect(await chain.provider.getTransactionCount(chain.deployer.address)).toBe(nonce);
    expect((await getCharge(id)).deployedAt).toBeNull();
    await chain.pay(chain.wallet(3), clone, usdc("25"));
    const done = await untilStatus(id, "COMPLETED");
    expect(done.deployedAt).not.toBeNull();
    expect(done).toMatchObject({ amountReceived: "25.00", netAmount: "24.75" });
    expect(await chain.balance(clone)).toBe(0n);
    // One relayer transaction: the payout, which created the clone (its code appears in that block).
    expect(await chain.provider.getTransactionCount(chain.deployer.address)).toBe(nonce + 1);
    const receipt = (await chain.provider.getTransactionReceipt(done.flushTxHash))!;
    expect(await chain.provider.getCode(clone, receipt.blockNumber - 1)).toBe("0x");
    expect(await chain.provider.getCode(clone, receipt.blockNumber)).not.toBe("0x");
  });

  it("a payment made before any worker indexed the chain is found when the first one starts", async () => {
    await runner!.stop();
    // As on a fresh install whose API took the charge and the payment before a worker ever ran.
    await app.db.prisma.$transaction([app.db.prisma.chainBlock.deleteMany(), app.db.prisma.chainCursor.deleteMany()]);
    const { id, clone } = await payableCharge("25");
    await chain.pay(chain.wallet(3), clone, usdc("25"));
    await chain.mine(5);
    startRunner();
    const done = await untilStatus(id, "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "25.00", netAmount: "24.75" });
    expect(await paymentsOf(id)).toHaveLength(1);
  });

  it("charges paid together are confirmed together: a few transactions for many charges, each counted once and paid out exactly", async () => {
    await runner!.stop();
    const paid: { id: string; clone: string }[] = [];
    for (let i = 0; i < 12; i++) paid.push(await payableCharge(i % 2 === 0 ? "2" : "1.5"));
    const before = await balances();
    for (const [i, { clone }] of paid.entries()) await chain.pay(chain.wallet(3), clone, usdc(i % 2 === 0 ? "2" : "1.5"));
    await chain.mine(CONFIRMATIONS);
    const from = app.queries.length;
    // Batches of 5 (50 in service): 12 charges need three at least.
    startRunner({ confirmBatch: 5 });
    for (const { id } of paid) await untilStatus(id, "COMPLETED");
    // Each confirming transaction takes its charges' row locks in one statement: one per batch, not one per charge.
    const batches = app.queries.slice(from).filter((q) => /FROM charges WHERE id = ANY\(\$1\) ORDER BY id FOR UPDATE$/.test(q.trim()));
    expect(batches.length).toBeGreaterThanOrEqual(3);
    expect(batches.length).toBeLessThanOrEqual(8);
    const after = await balances();
    expect(after.merchant - before.merchant).toBe(usdc("20.79")); // 6 × 1.98 + 6 × 1.485
    expect(after.fee - before.fee).toBe(usdc("0.21"));
    for (const { id, clone } of paid) {
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(["charge.pending", "charge.chain_selected", "charge.received", "charge.completed"]);
      expect(await paymentsOf(id)).toHaveLength(1);
      expect(await chain.balance(clone)).toBe(0n);
    }
    const rows = await app.db.prisma.balanceTransaction.groupBy({ by: ["type"], where: { chargeId: { in: paid.map((p) => p.id) } }, _count: true });
    expect(Object.fromEntries(rows.map((r) => [r.type, r._count]))).toEqual({ payment: 12, payout: 12, fee: 12 });
  });

  it("a payment after expiry is flushed to the merchant and reported as late", async () => {
    const { id, clone } = await payableCharge("25");
    await expireNow(id);
    expect((await getCharge(id)).status).toBe("EXPIRED");
    const before = await balances();
    await chain.pay(chain.wallet(3), clone, usdc("25"));
    const settled = await waitFor("the late payment's flush", async () => {
      const c = await getCharge(id);
      return c.flushTxHash ? c : undefined;
    });
    expect(settled).toMatchObject({ status: "EXPIRED", amountReceived: "25.00", feeAmount: "0.25", netAmount: "24.75" });
    expect((await balances()).merchant - before.merchant).toBe(usdc("24.75"));
    const types = (await eventsOf(id)).map((e) => e.type);
    expect(types).toEqual(["charge.pending", "charge.chain_selected", "charge.expired", "charge.late_payment", "charge.payout_confirmed"]);
    expect((await eventsOf(id))[3]!.data).toMatchObject({ status: "EXPIRED", payments: [{ amount: "25.00" }] });
  });

  it("a payment after cancellation is flushed to the merchant and reported as late", async () => {
    const { id, clone } = await payableCharge("25");
    expect((await app.call("DELETE", `/v1/charges/${id}`)).body.status).toBe("CANCELLED");
    await chain.pay(chain.wallet(3), clone, usdc("7"));
    const settled = await waitFor("the late payment's flush", async () => {
      const c = await getCharge(id);
      return c.flushTxHash ? c : undefined;
    });
    expect(settled).toMatchObject({ status: "CANCELLED", amountReceived: "7.00", feeAmount: "0.07", netAmount: "6.93" });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "charge.pending",
      "charge.chain_selected",
      "charge.cancelled",
      "charge.late_payment",
      "charge.payout_confirmed",
    ]);
    expect(await chain.balance(clone)).toBe(0n);
  });

  it("an underpaid charge expires and its partial amount is flushed to the merchant", async () => {
    const { id, clone } = await payableCharge("25");
    await chain.pay(chain.wallet(3), clone, usdc("10"));
    await waitFor("the partial payment", async () => (await getCharge(id)).amountReceived === "10.00");
    await expireNow(id);
    const settled = await waitFor("the underpaid flush", async () => {
      const c = await getCharge(id);
      return c.flushTxHash ? c : undefined;
    });
    expect(settled).toMatchObject({ status: "EXPIRED", amountReceived: "10.00", feeAmount: "0.10", netAmount: "9.90" });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "charge.pending",
      "charge.chain_selected",
      "charge.partial",
      "charge.underpaid",
      "charge.payout_confirmed",
    ]);
    expect(await chain.flushCount(clone)).toBe(1);
  });
});

describe("reorgs", () => {
  it("a payment removed by a reorg before its confirmations is never counted; its replacement is counted once", async () => {
    const { id, clone } = await payableCharge("25");
    stopProducer();
    const snapshot = await chain.provider.send("evm_snapshot", []);
    const orphan = await chain.pay(chain.wallet(3), clone, usdc("25"));
    const seen = await waitFor("the payment to be seen", async () => {
      const v = await publicView(id);
      return v.payments.length === 1 ? v : undefined;
    });
    expect(seen).toMatchObject({ status: "PENDING", amountPending: "25.00", amountReceived: null });
    expect(seen.payments).toEqual([{ txHash: orphan, amount: "25.00", status: "pending", confirmations: 1 }]);

    // The block with the payment (and the mint before it) is replaced by empty blocks.
    expect(await chain.provider.send("evm_revert", [snapshot])).toBe(true);
    await chain.mine(CONFIRMATIONS + 2);
    await waitFor("the reorg to be noticed", async () => (await publicView(id)).payments.length === 0);
    expect(await chain.provider.getTransactionReceipt(orphan)).toBeNull();
    await chain.mine(CONFIRMATIONS + 2);
    await runnerPassed(runner!, chain.provider);
    expect(await getCharge(id)).toMatchObject({ status: "PENDING", amountReceived: null });
    expect(await eventsOf(id)).toHaveLength(2);

    startProducer();
    const replacement = await chain.pay(chain.wallet(3), clone, usdc("25"));
    const done = await untilStatus(id, "COMPLETED");
    expect(done.amountReceived).toBe("25.00");
    const payments = await paymentsOf(id);
    expect(payments.map((p) => p.txHash)).toEqual([replacement]);
    expect(await chain.flushCount(clone)).toBe(1);
  });
});
