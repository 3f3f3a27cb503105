// The ledger against what a chain adversary can do, on two anvils standing in for two test-mode chains
// (31337 and 84532) that share ChargeFactoryV2's address, so a charge's address is the same on both:
// reorgs deeper than the confirmations (a payment re-included at another log index, a payout and the
// deployment it carried taken away), money at an address before the pick or on the other chain, money
// the indexer never saw, a ledger the chain disagrees with (reconcile), and expiry by the chain's clock
// across a worker outage. After each, the charge's money fields are the sums of its ledger rows.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { AbiCoder, type Contract, keccak256, parseUnits, toBeHex, Wallet, zeroPadValue } from "ethers";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { ChainRpc } from "../../src/chain/rpc.js";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { formatAmount, parseAmount } from "../../src/domain/money.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { reconcileChain, runReconciliation } from "../../src/jobs/reconcile.js";
import { ProcessMetrics } from "../../src/lib/process-metrics.js";
import { ANVIL_KEYS, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);
const quiet = pino({ level: process.env.TEST_LOG ?? "silent" });

let a: TestChain;
let b: TestChain;
let chainA: EnabledChain;
let chainB: EnabledChain;
let app: TestApp;
const runners = new Map<number, ChainRunner>();
const metrics = new ProcessMetrics();
const logs = recordingLogger();

beforeAll(async () => {
  [a, b] = await Promise.all([startTestChain(), startTestChain({ chainId: 84532 })]);
  [chainA, chainB] = await Promise.all([a.enabled(CONFIRMATIONS), b.enabled(CONFIRMATIONS)]);
  app = await startApp(POLLING, { chains: new ChainSet([chainA, chainB]) });
  startRunner(chainA);
  startRunner(chainB);
  producing = true;
}, 60_000);
// A test that failed halfway leaves the next one working chains.
afterEach(async () => {
  await Promise.all([a.automine(true), b.automine(true)]);
  for (const chain of [chainA, chainB]) if (!runners.has(chain.chainId)) startRunner(chain);
  producing = true;
});
afterAll(async () => {
  producing = false;
  clearInterval(producer);
  for (const r of runners.values()) await r.stop();
  await app?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
});

function startRunner(chain: EnabledChain, options: { reconcileMs?: number } = {}) {
  const logger = chain === chainA ? logs.logger : quiet;
  runners.set(
    chain.chainId,
    startChainRunner(app.db, chain, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000, metrics, ...options }),
  );
}
/** Waits until chain A's reconciliation has run `n` more times (its summary line), so whatever it would do has been done. */
async function reconciled(n = 2) {
  const count = () => logs.lines().filter((l) => l.msg === "reconciled the ledger with the chain").length;
  const from = count();
  await waitFor(`${n} more reconciliations of chain A`, async () => count() >= from + n);
}
async function stopRunner(chain: EnabledChain) {
  await runners.get(chain.chainId)?.stop();
  runners.delete(chain.chainId);
}
/** A block every 100 ms on both chains while `producing`, so confirmations come. */
let producing = false;
const producer = setInterval(() => {
  if (producing) for (const c of [a, b]) void c?.mine().catch(() => {});
}, 100);

let seq = 0;
/** A charge, its chain picked unless `chain` is null. */
async function charge(amount: string, chain: EnabledChain | null = chainA): Promise<{ id: string; address: string }> {
  const made = (await app.call("POST", "/v1/charges", { body: { orderId: `ledger-${++seq}`, amount } })).body;
  const { depositAddress } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: made.id } });
  if (chain) {
    const picked = await app.call("POST", `/v1/public/charges/${made.id}/chain`, { body: { chainId: chain.chainId }, key: null });
    expect(picked.status, JSON.stringify(picked.body)).toBe(200);
    expect(picked.body.cloneAddress).toBe(depositAddress);
  }
  return { id: made.id, address: depositAddress! };
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
const rows = async (chargeId: string) => (await app.call("GET", `/v1/balance_transactions?chargeId=${chargeId}&limit=100`)).body.data as any[];
const signed = (amount: string) => (amount.startsWith("-") ? -parseAmount(amount.slice(1))! : parseAmount(amount)!);
const sum = (list: any[], ...types: string[]) =>
  list.filter((r) => types.includes(r.type) || (r.type === "reversal" && types.includes(r.reverses))).reduce((s, r) => s + signed(r.amount), 0n);

/**
 * The charge's money fields equal the sums of its ledger rows (a reversal counts with the type it
 * undoes), and every chain's reconciliation finds nothing.
 */
async function expectLedgerAgrees(id: string) {
  const list = await rows(id);
  const byId = new Map(list.map((r) => [r.id, r]));
  for (const r of list) if (r.type === "reversal") r.reverses = byId.get(r.reversesId)!.type;
  const c = await getCharge(id);
  expect(c.amountReceived).toBe(formatAmount(sum(list, "payment")));
  expect(c.netAmount).toBe(formatAmount(-sum(list, "payout")));
  expect(c.feeAmount).toBe(formatAmount(-sum(list, "fee")));
  expect(c.amountRefunded).toBe(formatAmount(-sum(list, "refund")));
  for (const [test, chain] of [
    [a, chainA],
    [b, chainB],
  ] as const) {
    const rpc = new ChainRpc(chain.chainId, [test.anvil.url]);
    try {
      expect((await reconcileChain(app.db.prisma, rpc, chain)).differences).toEqual([]);
    } finally {
      rpc.destroy();
    }
  }
}

/** `from`'s USDC transfer of `amount` to `to`, signed now (with its nonce and fees) and sent later, as often as wanted. */
async function signedTransfer(test: TestChain, from: number, to: string, amount: bigint, tipGwei = 1n): Promise<string> {
  const wallet = test.wallet(from);
  const request = await (test.usdc.connect(wallet) as Contract).getFunction("transfer").populateTransaction(to, amount);
  const fees = { maxPriorityFeePerGas: tipGwei * 10n ** 9n, maxFeePerGas: 200n * 10n ** 9n };
  return wallet.signTransaction(await wallet.populateTransaction({ ...request, ...fees, gasLimit: 100_000 }));
}

describe("reorgs deeper than the confirmations", () => {
  it("a payment re-included behind another transfer (another log index) is the same payment: counted once, no late payment; the lost payout is made again and the charge needs review", async () => {
    const { id, address } = await charge("10");
    await a.mint(a.wallet(3).address, usdc("10"));
    await a.mint(a.wallet(5).address, usdc("1"));
    const payment = await signedTransfer(a, 3, address, usdc("10"));
    const merchantBefore = await a.balance(WALLET);
    const snapshot = await a.provider.send("evm_snapshot", []);
    const hash = (await a.provider.broadcastTransaction(payment)).hash;
    const done = await until("the charge completed and paid out", id, (c) => c.status === "COMPLETED" && c.deployedAt !== null);
    expect(await a.balance(WALLET)).toBe(merchantBefore + usdc("9.9"));
    const firstPayout = done.flushTxHash;

    // While no worker watches, the chain drops every block since the snapshot and re-includes the
    // payment behind another transfer; the payout is gone for good.
    producing = false;
    await stopRunner(chainA);
    expect(await a.provider.send("evm_revert", [snapshot])).toBe(true);
    await a.automine(false);
    // Anvil orders a block by tip: the other transfer goes first.
    const other = await signedTransfer(a, 5, Wallet.createRandom().address, usdc("1"), 50n);
    await a.provider.broadcastTransaction(other);
    await a.provider.broadcastTransaction(payment);
    await a.mine(1);
    await a.automine(true);
    const receipt = (await a.provider.getTransactionReceipt(hash))!;
    expect(receipt.logs.map((l) => l.index)).toEqual([1]);
    await a.mine(20);
    expect(await a.provider.getTransactionReceipt(firstPayout)).toBeNull();
    expect(await a.balance(WALLET)).toBe(merchantBefore);
    expect(await a.provider.getCode(address)).toBe("0x");
    startRunner(chainA);
    producing = true;

    const after = await until("the payout made again", id, (c) => c.needsReview && c.flushTxHash !== null && c.deployedAt !== null);
    expect(after).toMatchObject({ status: "COMPLETED", amountReceived: "10.00", feeAmount: "0.10", netAmount: "9.90", needsReview: true });
    expect(after.reviewReason).toMatch(/a reorg \d+ blocks deep \(deeper than the confirmations\)/);
    expect(after.reviewReason).toContain(firstPayout);
    expect(after.flushTxHash).not.toBe(firstPayout);
    expect(await a.balance(WALLET)).toBe(merchantBefore + usdc("9.9"));
    expect(await a.balance(address)).toBe(0n);
    expect(await a.provider.getCode(address)).not.toBe("0x");
    const payments = await app.db.prisma.chainTransfer.findMany({ where: { chargeId: id, kind: "PAYMENT" } });
    expect(payments.map((p) => [p.txHash, p.logIndex, p.status])).toEqual([[hash, 1, "CONFIRMED"]]);
    const types = await eventTypes(id);
    expect(types.filter((t) => t === "charge.completed")).toHaveLength(1);
    expect(types).not.toContain("charge.late_payment");
    expect(types.filter((t) => t === "charge.needs_review")).toHaveLength(1);
    expect((await rows(id)).map((r) => `${r.type} ${r.amount}`).sort()).toEqual(
      ["payment 10.00", "fee -0.10", "payout -9.90", "reversal 0.10", "reversal 9.90", "fee -0.10", "payout -9.90"].sort(),
    );
    await expectLedgerAgrees(id);
  });

  it("a payout (and the deployment in it) taken away by a deep reorg while the worker runs: the payment stays, the clone is deployed and paid out again, once", async () => {
    const { id, address } = await charge("10");
    producing = false;
    await a.pay(a.wallet(3), address, usdc("10"));
    const snapshot = await a.provider.send("evm_snapshot", []);
    const merchantBefore = await a.balance(WALLET);
    producing = true;
    const done = await until("the charge completed and paid out", id, (c) => c.status === "COMPLETED" && c.deployedAt !== null);
    // The indexer confirms the payout a moment before the relayer's tracker does. A revert in between
    // is another story: the tracker sends the very same transaction again, it is re-included, and there
    // is nothing to review. This one starts once both have confirmed it.
    await waitFor("the relayer's payout confirmed", async () => {
      const sent = await app.db.prisma.relayerTransaction.findFirst({ where: { txHash: done.flushTxHash, status: "CONFIRMED" } });
      return sent ?? undefined;
    });
    producing = false;
    expect(await a.provider.send("evm_revert", [snapshot])).toBe(true);
    expect(await a.provider.getCode(address)).toBe("0x");
    await a.mine(20);
    producing = true;

    const after = await until("the clone deployed again", id, (c) => c.needsReview && c.deployedAt !== null && c.flushTxHash !== null);
    expect(after).toMatchObject({ status: "COMPLETED", amountReceived: "10.00", netAmount: "9.90", feeAmount: "0.10" });
    expect(after.reviewReason).toContain(done.flushTxHash);
    expect(await a.provider.getCode(address)).not.toBe("0x");
    expect(await a.balance(WALLET)).toBe(merchantBefore + usdc("9.9"));
    expect(await a.balance(address)).toBe(0n);
    const clone = await app.db.prisma.clone.findUniqueOrThrow({ where: { chargeId_chainId: { chargeId: id, chainId: chainA.chainId } } });
    expect(clone.held.toFixed()).toBe("0");
    await expectLedgerAgrees(id);
  });
});

describe("money wherever it reaches a charge's address", () => {
  it("sent before the chain was picked: counted; the page asks only for the rest and the payout moves all of it", async () => {
    const { id, address } = await charge("10", null);
    await a.pay(a.wallet(3), address, usdc("3"));
    await until("the early money confirmed", id, (c) => c.amountReceived === "3.00");
    const picked = await app.call("POST", `/v1/public/charges/${id}/chain`, { body: { chainId: chainA.chainId }, key: null });
    expect(picked.body).toMatchObject({ cloneAddress: address, amountRemaining: "7.00" });
    const merchantBefore = await a.balance(WALLET);
    await a.pay(a.wallet(3), address, usdc("7"));
    const done = await until("the charge completed", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "10.00", netAmount: "9.90", feeAmount: "0.10" });
    expect(await eventTypes(id)).not.toContain("charge.underpaid");
    expect(await a.balance(WALLET)).toBe(merchantBefore + usdc("9.9"));
    await expectLedgerAgrees(id);
  });

  it("sent on the other enabled chain: recorded there, counted, and paid out there (the clone deployed on that chain too)", async () => {
    const { id, address } = await charge("10", chainA);
    const merchantB = await b.balance(WALLET);
    await b.pay(b.wallet(3), address, usdc("4"));
    await until("the other chain's money confirmed", id, (c) => c.amountReceived === "4.00");
    const payments = (await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body.payments;
    expect(payments).toEqual([expect.objectContaining({ amount: "4.00", status: "confirmed" })]);
    expect((await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body.amountRemaining).toBe("6.00");
    await a.pay(a.wallet(3), address, usdc("6"));
    const done = await until("both chains paid out", id, (c) => c.status === "COMPLETED" && c.netAmount === "9.90");
    expect(done).toMatchObject({ amountReceived: "10.00", feeAmount: "0.10" });
    expect(await b.balance(WALLET)).toBe(merchantB + usdc("3.96"));
    expect(await b.balance(b.feeRecipient)).toBeGreaterThanOrEqual(usdc("0.04"));
    expect(await b.provider.getCode(address)).not.toBe("0x");
    const list = await rows(id);
    expect(
      list
        .filter((r) => r.chainId === chainB.chainId)
        .map((r) => `${r.type} ${r.amount}`)
        .sort(),
    ).toEqual(["fee -0.04", "payment 4.00", "payout -3.96"]);
    await expectLedgerAgrees(id);
  });

  it("that the indexer never saw (an RPC that answered without the logs): found by the periodic reconciliation, counted, not flagged", async () => {
    const { id, address } = await charge("5", null);
    await stopRunner(chainB);
    await b.pay(b.wallet(3), address, usdc("5"));
    await b.mine(3);
    // The indexer resumes past the block that paid, as after a provider's empty answer.
    const head = await b.provider.getBlock("latest");
    await app.db.prisma.chainBlock.create({
      data: {
        chainId: chainB.chainId,
        number: BigInt(head!.number),
        hash: head!.hash!,
        parentHash: head!.parentHash,
        timestamp: new Date(head!.timestamp * 1000),
      },
    });
    await app.db.prisma.chainCursor.update({
      where: { chainId: chainB.chainId },
      data: { blockNumber: BigInt(head!.number), blockHash: head!.hash!, blockTime: new Date(head!.timestamp * 1000) },
    });
    startRunner(chainB, { reconcileMs: 200 });
    await until("the money found", id, (c) => c.amountReceived === "5.00");
    const picked = await app.call("POST", `/v1/public/charges/${id}/chain`, { body: { chainId: chainB.chainId }, key: null });
    expect(picked.status).toBe(409);
    const done = await until("the charge completed", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "5.00", netAmount: "4.95", needsReview: false });
    await expectLedgerAgrees(id);
    await stopRunner(chainB);
    startRunner(chainB);
  });
});

describe("reconciliation", () => {
  /** USDC's balances mapping is FiatToken's storage slot 9 (balance and blacklist state in one word). */
  const balanceSlot = (holder: string) => keccak256(AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [holder, 9]));
  const setBalance = async (holder: string, units: bigint) =>
    a.provider.send("anvil_setStorageAt", [await a.usdc.getAddress(), balanceSlot(holder), zeroPadValue(toBeHex(units), 32)]);
  const cli = (...args: string[]) =>
    promisify(execFile)(process.execPath, ["dist/cli/main.js", ...args], {
      env: {
        ...process.env,
        NODE_ENV: "test",
        LOG_LEVEL: "silent",
        DATABASE_URL: app.databaseUrl,
        FEE_RECIPIENT: a.feeRecipient,
        RELAYER_PRIVATE_KEY: ANVIL_KEYS[0],
        CHAIN_31337_RPC_URL: a.anvil.url,
        CHAIN_31337_FACTORY: chainA.factory,
        CHAIN_31337_USDC: chainA.usdc,
      },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it("money the ledger does not know of: a difference, an error line, the metric, one charge.needs_review; marked reviewed, it is cleared", async () => {
    const { id, address } = await charge("2");
    await a.pay(a.wallet(3), address, usdc("2"));
    await until("the charge completed", id, (c) => c.status === "COMPLETED" && c.flushTxHash !== null);
    await expectLedgerAgrees(id);
    // The chain now says the clone holds 5 USDC, with no transfer to show for it.
    await setBalance(address, usdc("5"));
    await stopRunner(chainA);
    startRunner(chainA, { reconcileMs: 200 });
    const flagged = await until("the difference flagged", id, (c) => c.needsReview);
    expect(flagged.reviewReason).toMatch(/holds 5\.00 USDC, the ledger says 0\.00 \(money the ledger does not know\)/);
    await waitFor("the metric", async () =>
      (await metrics.registry.getSingleMetricAsString("stablegate_reconcile_differences")).includes('chain_id="31337"} 1'),
    );
    expect(logs.lines().some((l) => l.level === 50 && l.chargeId === id && /reconciliation difference/.test(String(l.msg)))).toBe(true);
    // The next runs find the same difference: no second event.
    await reconciled();
    expect((await eventTypes(id)).filter((t) => t === "charge.needs_review")).toHaveLength(1);

    const reviewed = await app.call("POST", `/v1/charges/${id}/mark_reviewed`);
    expect(reviewed.status).toBe(200);
    expect(reviewed.body).toMatchObject({ needsReview: false, reviewReason: null });
    expect(await eventTypes(id)).toContain("charge.reviewed");
    // Reviewed, the same finding flags it no more; the clone is then put right.
    await reconciled();
    expect((await getCharge(id)).needsReview).toBe(false);
    await setBalance(address, 0n);
    await waitFor("the metric back to 0", async () =>
      (await metrics.registry.getSingleMetricAsString("stablegate_reconcile_differences")).includes('chain_id="31337"} 0'),
    );
    expect((await getCharge(id)).needsReview).toBe(false);
    await stopRunner(chainA);
    startRunner(chainA);
  });

  // The embedded database belongs to one process: the CLI runs beside the service on PostgreSQL only.
  it.runIf(process.env.DATABASE_URL)(
    "stablegate reconcile --json beside the running service: exit 0 and no differences, then exit 1 naming the charge",
    async () => {
      const { id, address } = await charge("1");
      await a.pay(a.wallet(3), address, usdc("1"));
      await until("the charge completed", id, (c) => c.status === "COMPLETED" && c.flushTxHash !== null);
      await waitFor("the ledger confirmed as far as the chain", async () => (await cli("reconcile", "--chain", "31337", "--json")).code === 0);
      const clean = await cli("reconcile", "--chain", "31337", "--json");
      expect(JSON.parse(clean.stdout)).toEqual({ differences: [] });
      await setBalance(address, usdc("0.5"));
      await a.mine(CONFIRMATIONS + 1);
      await runnerPassed(runners.get(chainA.chainId)!, a.provider);
      const dirty = await cli("reconcile", "--json");
      expect(dirty.code).toBe(1);
      const { differences } = JSON.parse(dirty.stdout);
      expect(differences).toEqual([expect.objectContaining({ chargeId: id, chainId: 31337, address, kind: "balance" })]);
      const text = await cli("reconcile", "--chain", "31337");
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(id);
      await setBalance(address, 0n);
    },
  );
  it("a node that has not reached the confirmed block (a lagging endpoint) is not taken for a reorg: the pass is skipped quietly, nothing flagged", async () => {
    const { id, address } = await charge("1");
    await a.pay(a.wallet(3), address, usdc("0.40"));
    await until("the partial payment confirmed", id, (c) => c.amountReceived === "0.40");
    const logged = logs.lines().length;
    const lagging = new ChainRpc(chainA.chainId, [a.anvil.url]);
    lagging.getBlock = async () => null;
    try {
      const result = await runReconciliation(app.db.prisma, lagging, chainA, { ...SETTINGS, feed: app.live }, logs.logger);
      expect(result.skipped).toMatch(/the node has not reached block \d+ yet/);
      expect(result.differences).toEqual([]);
    } finally {
      lagging.destroy();
    }
    const lines = logs.lines().slice(logged);
    expect(lines.some((l) => l.level === 30 && /reconciliation skipped: the node has not reached/.test(String(l.msg)))).toBe(true);
    expect(lines.filter((l) => l.level >= 40 && /reconciliation/.test(String(l.msg)))).toEqual([]);
    expect((await getCharge(id)).needsReview).toBe(false);
  });
});

// Last: it moves the first chain's clock half an hour ahead of the wall clock.
describe("the chain's clock", () => {
  it("a payment mined 90 s before expiresAt counts, although the wall clock passed it while the worker was down", async () => {
    const { id, address } = await charge("10");
    const { expiresAt } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id } });
    const at = Math.floor(expiresAt.getTime() / 1000);
    producing = false;
    await stopRunner(chainA);
    await a.mint(a.wallet(3).address, usdc("10"));
    await a.provider.send("evm_setNextBlockTimestamp", [at - 90]);
    await (a.usdc.connect(a.wallet(3)) as Contract).getFunction("transfer")(address, usdc("10"));
    await a.provider.send("evm_setNextBlockTimestamp", [at + 100]);
    await a.mine(5);
    // The expiry sweep runs first after the restart, the wall clock well past expiresAt.
    expect(await expireDueCharges(app.db.prisma, SETTINGS, new Date((at + 200) * 1000))).toEqual([]);
    expect((await getCharge(id)).status).toBe("PENDING");
    startRunner(chainA);
    producing = true;
    const done = await until("the charge completed", id, (c) => c.status === "COMPLETED");
    expect(done.amountReceived).toBe("10.00");
    const types = await eventTypes(id);
    expect(types).not.toContain("charge.expired");
    expect(types).not.toContain("charge.late_payment");
    expect((await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body.status).toBe("COMPLETED");
    await expectLedgerAgrees(id);
  });

  it("unpicked, paid to its address on time during a worker outage: neither the wall clock nor one chain's clock expires it; it completes once that chain is read", async () => {
    const { id, address } = await charge("10", null);
    const at = await expiryAhead(id);
    producing = false;
    await Promise.all([stopRunner(chainA), stopRunner(chainB)]);
    await payAt(a, address, usdc("10"), at - 90);
    await Promise.all([mineTo(a, at + 100), mineTo(b, at + 100)]);
    // The worker restarts; chain B is read first, so its clock passes expiresAt before chain A's does.
    startRunner(chainB);
    await confirmedPast(chainB, at + 100);
    expect(await expireDueCharges(app.db.prisma, app.settings, new Date((at + 200) * 1000))).toEqual([]);
    expect((await getCharge(id)).status).toBe("PENDING");
    startRunner(chainA);
    producing = true;
    const done = await until("the charge completed", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "10.00", netAmount: "9.90", chainId: null });
    expect(await eventTypes(id)).not.toContain("charge.expired");
    await expectLedgerAgrees(id);
  });

  it("picked on chain A, paid on time on chain B while B's indexer lagged: A's clock alone does not expire it; it completes once B is read", async () => {
    const { id, address } = await charge("10", chainA);
    const at = await expiryAhead(id);
    producing = false;
    await stopRunner(chainB);
    await payAt(b, address, usdc("10"), at - 90);
    await Promise.all([mineTo(a, at + 100), mineTo(b, at + 100)]);
    await confirmedPast(chainA, at + 100);
    expect(await expireDueCharges(app.db.prisma, app.settings, new Date((at + 200) * 1000))).toEqual([]);
    expect((await getCharge(id)).status).toBe("PENDING");
    startRunner(chainB);
    producing = true;
    const done = await until("the charge completed", id, (c) => c.status === "COMPLETED");
    expect(done).toMatchObject({ amountReceived: "10.00", netAmount: "9.90", chainId: chainA.chainId });
    expect((await rows(id)).filter((r) => r.type === "payment").map((r) => r.chainId)).toEqual([chainB.chainId]);
    expect(await eventTypes(id)).not.toContain("charge.expired");
    await expectLedgerAgrees(id);
  });

  it("expires once every chain that could have paid it has passed expiresAt, and not while one has no clock yet", async () => {
    const { id } = await charge("10", null);
    const at = await expiryAhead(id);
    await Promise.all([mineTo(a, at + 100), mineTo(b, at + 100)]);
    await Promise.all([confirmedPast(chainA, at + 100), confirmedPast(chainB, at + 100)]);
    // A third enabled chain of the mode that has not been read yet (no cursor) could have been paid too.
    const unread = { chainId: 11155111, testnet: true };
    expect(await expireDueCharges(app.db.prisma, { ...app.settings, chains: [...app.settings.chains!, unread] }, new Date())).toEqual([]);
    const [expired] = await expireDueCharges(app.db.prisma, app.settings, new Date(), { only: id });
    expect(expired).toMatchObject({ id, status: "EXPIRED" });
  });
});

/** Moves the charge's expiry 10 minutes past both chains' clocks and the wall clock (earlier tests move the clocks); its time in seconds. */
async function expiryAhead(id: string): Promise<number> {
  const heads = await Promise.all([a, b].map(async (c) => (await c.provider.getBlock("latest"))!.timestamp));
  const at = Math.max(...heads, Math.floor(Date.now() / 1000)) + 600;
  await app.db.prisma.charge.update({ where: { id }, data: { expiresAt: new Date(at * 1000) } });
  return at;
}

/** A USDC payment of `amount` to `to` on `test`, mined in a block stamped `time` (seconds). */
async function payAt(test: TestChain, to: string, amount: bigint, time: number) {
  await test.mint(test.wallet(3).address, amount);
  await test.provider.send("evm_setNextBlockTimestamp", [time]);
  await (await (test.usdc.connect(test.wallet(3)) as Contract).getFunction("transfer")(to, amount)).wait();
}

/** Mines blocks on `test` from `time` (seconds) on, enough to confirm it. */
async function mineTo(test: TestChain, time: number) {
  await test.provider.send("evm_setNextBlockTimestamp", [time]);
  await test.mine(CONFIRMATIONS + 3);
}

/** Waits for `chain`'s indexer to confirm a block stamped `time` (seconds) or later. */
async function confirmedPast(chain: EnabledChain, time: number) {
  await waitFor(`chain ${chain.chainId} confirmed past ${time}`, async () => {
    const cursor = await app.db.prisma.chainCursor.findUnique({ where: { chainId: chain.chainId } });
    return cursor?.confirmedTime && cursor.confirmedTime.getTime() >= time * 1000 ? cursor : undefined;
  });
}
