// The subscriptions engine on a real anvil with Circle's USDC and SubscriptionsV1: the checkout relayed
// to ACTIVE, renewals over several periods on the devnet's clock, each failure kind to PAST_DUE and
// back, retries spent to CANCELED, a trial, cancel at period end, a revoke by the payer seen from the
// chain, and the ledger equal to the chain (payer, merchant and fee recipient) after all of it.
import { Contract, MaxUint256, parseUnits, type Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import {
  type Permission,
  PERMISSION_TYPES,
  permissionHash,
  storePermission,
  subscriptionSalt,
  subscriptionsDomain,
  subscriptionsInterface,
  UNTIL_REVOKED,
} from "../../src/chain/subscriptions.js";
import { newId } from "../../src/domain/ids.js";
import { cancelSubscription } from "../../src/domain/subscription-endings.js";
import { parseRetrySchedule } from "../../src/domain/subscription-billing.js";
import { ChainRpc } from "../../src/chain/rpc.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { reconcileChain } from "../../src/jobs/reconcile.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";

const usdc = (s: string) => parseUnits(s, 6);
const DAY = 86_400;

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic;
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());
/** The chain runner's log, so that a wait that times out can say what the runner met meanwhile. */
const runnerLog = recordingLogger();
/** The runner's last warnings and errors, for a failure's message. */
const runnerTrouble = () =>
  runnerLog
    .lines()
    .filter((l) => l.level >= 40)
    .slice(-5)
    .map((l) => `${l.msg}${l.err ? `: ${(l.err as { message?: string }).message}` : ""}`)
    .join("\n");

beforeAll(async () => {
  chain = await startTestChain();
  // local: the devnet whose clock the test helper's advance may move.
  devnet = { ...(await chain.enabled(2)), local: true };
  // startTestChain deploys SubscriptionsV1 beside the factory.
  expect(await chain.provider.getCode(devnet.subscriptions)).not.toBe("0x");
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, runnerLog.logger, {
    intervalMs: 50,
    settings: { ...SETTINGS, feed: app.live },
    bumpAfterMs: 60_000,
    subscriptionRetrySchedule: parseRetrySchedule("1h,1d"),
  });
  startProducer();
}, 60_000);
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

const scope = () => ({ merchantId: app.merchant.merchant.id, livemode: false });
const sub = (id: string) => app.db.prisma.subscription.findUniqueOrThrow({ where: { id } });
const chainTime = async () => BigInt((await chain.provider.getBlock("latest"))!.timestamp);
/** Moves the devnet's clock to `seconds` (a block at that time). */
async function advanceTo(seconds: bigint | number): Promise<void> {
  stopProducer();
  const now = await chainTime();
  if (BigInt(seconds) > now) await chain.provider.send("evm_setNextBlockTimestamp", [Number(seconds)]);
  await chain.mine();
  startProducer();
}
const eventTypes = async (id: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: id } }, orderBy: { createdAt: "asc" } })).map((e) => e.type);

/** A plan and an INCOMPLETE subscription to it, as the API would make them. */
async function newSubscription(options: { trialDays?: number; amount?: string; days?: number } = {}) {
  const customer = (
    await app.call("POST", "/v1/customers", { body: { email: `subscriber-${Math.random().toString(36).slice(2)}@example.com`, name: "Subscriber" } })
  ).body;
  const amount = usdc(options.amount ?? "25");
  const plan = await app.db.prisma.plan.create({
    data: { id: newId("plan"), ...scope(), name: "Pro", amount, interval: "day", intervalCount: options.days ?? 1, trialDays: options.trialDays ?? 0 },
  });
  return app.db.prisma.subscription.create({
    data: {
      id: newId("sub"),
      ...scope(),
      customerId: customer.id,
      planId: plan.id,
      amount,
      periodSeconds: (options.days ?? 1) * DAY,
      feeBps: 100,
      trialDays: options.trialDays ?? 0,
      manageToken: `manage-${Math.random()}`,
      expiresAt: new Date(Date.now() + 23 * 3_600_000),
    },
  });
}

/** The buyer's authorization as the checkout page stores it: the permission signed by `payer`, who approved the contract. */
async function authorize(id: string, payer: Wallet): Promise<Permission> {
  const s = await sub(id);
  const now = await chainTime();
  const start = s.trialDays > 0 ? now + BigInt(s.trialDays * DAY) : now;
  const p: Permission = {
    payer: payer.address,
    merchant: WALLET,
    token: devnet.usdc,
    spender: chain.deployer.address,
    amount: s.amount,
    feeBps: s.feeBps,
    period: BigInt(s.periodSeconds),
    start,
    end: UNTIL_REVOKED,
    salt: subscriptionSalt(id),
  };
  const signature = await payer.signTypedData(subscriptionsDomain(devnet.chainId, devnet.subscriptions), PERMISSION_TYPES, p);
  await (await (chain.usdc.connect(payer) as Contract).getFunction("approve")(devnet.subscriptions, MaxUint256)).wait();
  await app.db.prisma.subscription.update({
    where: { id },
    data: {
      chainId: devnet.chainId,
      payer: payer.address,
      settlementWallet: WALLET,
      spender: p.spender,
      contractAddress: devnet.subscriptions,
      permission: storePermission(p),
      permissionHash: permissionHash(p),
      permissionSignature: signature,
      trialEnd: s.trialDays > 0 ? new Date(Number(start) * 1000) : null,
      nextPullAt: new Date(),
    },
  });
  return p;
}

/** Waits until the subscription is `status` in period `periodIndex` with its latest invoice PAID. */
async function paidIn(id: string, periodIndex: number) {
  const s = await waitFor(`${id} ACTIVE in period ${periodIndex}`, async () => {
    const s = await sub(id);
    return s.status === "ACTIVE" && s.periodIndex === periodIndex && s;
  });
  const invoice = await waitFor(`period ${periodIndex}'s invoice PAID`, async () => {
    const i = await app.db.prisma.invoice.findUniqueOrThrow({ where: { id: s.latestInvoiceId! } });
    return i.status === "PAID" && i;
  });
  return { s, invoice };
}

async function lastPull(id: string) {
  return app.db.prisma.subscriptionPull.findFirstOrThrow({ where: { subscriptionId: id }, orderBy: { createdAt: "desc" } });
}

describe("subscriptions on chain", () => {
  const payer = () => chain.wallet(3);

  it("checkout to ACTIVE, renewals, each failure kind to PAST_DUE and back, then retries spent to CANCELED; the ledger equals the chain", async () => {
    // The merchant emails invoices: the subscriber hears of each failure and of the end.
    await app.db.prisma.merchant.update({ where: { id: scope().merchantId }, data: { emailInvoices: true } });
    const merchantBefore = await chain.balance(WALLET);
    const feeBefore = await chain.balance(chain.feeRecipient);
    await chain.mint(payer().address, usdc("1000"));
    const payerBefore = await chain.balance(payer().address);
    const asideBefore = await chain.balance(chain.wallet(5).address);
    const s0 = await newSubscription();
    const p = await authorize(s0.id, payer());

    // The checkout: subscribe() relayed, period 0 pulled and its invoice paid from the chain's facts.
    const { s: active, invoice: first } = await paidIn(s0.id, 0);
    expect(active.currentPeriodStart!.getTime()).toBe(Number(p.start) * 1000);
    expect(active.nextPullAt!.getTime()).toBe(Number(p.start + p.period) * 1000);
    expect(first).toMatchObject({ billingReason: "subscription_create", periodIndex: 0, total: usdc("25"), customerId: s0.customerId });
    expect(first.number).toMatch(/^INV-\d{6}$/);
    expect((first.lineItems as { description: string }[])[0]!.description).toMatch(/^Pro \d{4}-\d{2}-\d{2} – \d{4}-\d{2}-\d{2}$/);
    const charge = await waitFor("the period's charge COMPLETED", async () => {
      const c = await app.db.prisma.charge.findFirstOrThrow({ where: { invoiceId: first.id } });
      return c.status === "COMPLETED" && c;
    });
    expect(charge).toMatchObject({ depositAddress: null, chainId: devnet.chainId, settlementWallet: WALLET });

    // A renewal at the period's end, by the chain's clock.
    await advanceTo(p.start + p.period);
    const { invoice: second } = await paidIn(s0.id, 1);
    expect(second.billingReason).toBe("subscription_cycle");

    // Each way a pull fails: PAST_DUE, the invoice OPEN, invoice.payment_failed; fixed, the retry an hour later succeeds.
    const usdcOf = (w: Wallet) => chain.usdc.connect(w) as Contract;
    const kinds: { reason: string; fail: () => Promise<unknown>; fix: () => Promise<unknown> }[] = [
      {
        reason: "insufficient_balance",
        fail: async () => (await usdcOf(payer()).getFunction("transfer")(chain.wallet(5).address, await chain.balance(payer().address))).wait(),
        fix: () => chain.mint(payer().address, usdc("1000")),
      },
      {
        reason: "insufficient_allowance",
        fail: async () => (await usdcOf(payer()).getFunction("approve")(devnet.subscriptions, 0n)).wait(),
        fix: async () => (await usdcOf(payer()).getFunction("approve")(devnet.subscriptions, MaxUint256)).wait(),
      },
      {
        reason: "blacklisted",
        fail: async () => (await chain.usdc.getFunction("blacklist")(payer().address)).wait(),
        fix: async () => (await chain.usdc.getFunction("unBlacklist")(payer().address)).wait(),
      },
      {
        reason: "paused",
        fail: async () => (await chain.usdc.getFunction("pause")()).wait(),
        fix: async () => (await chain.usdc.getFunction("unpause")()).wait(),
      },
    ];
    let period = 1;
    for (const kind of kinds) {
      await kind.fail();
      period++;
      await advanceTo(p.start + BigInt(period) * p.period);
      const pastDue = await waitFor(`PAST_DUE (${kind.reason})`, async () => {
        const s = await sub(s0.id);
        return s.status === "PAST_DUE" && s.periodIndex === period && s;
      });
      expect(pastDue.failedPulls).toBe(1);
      expect(await lastPull(s0.id)).toMatchObject({ status: "FAILED", reason: kind.reason, txId: null });
      const open = await app.db.prisma.invoice.findUniqueOrThrow({ where: { id: pastDue.latestInvoiceId! } });
      expect(open.status).toBe("OPEN");
      expect(await eventTypes(open.id)).toContain("invoice.payment_failed");
      if (kind.reason === "insufficient_balance") {
        // Only the pull pays a period: the hosted invoice's Pay makes no charge to pay by hand (a retry would pay it twice).
        const pay = await fetch(`${app.url}/pay/invoices/${open.id}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        });
        expect(pay.status).toBe(409);
        expect(await app.db.prisma.charge.count({ where: { invoiceId: open.id } })).toBe(1);
      }
      await kind.fix();
      await advanceTo(p.start + BigInt(period) * p.period + 3_600n);
      const { s: back } = await paidIn(s0.id, period);
      expect(back.failedPulls).toBe(0);
    }

    // Retries spent: fails at the period's start, an hour later, then the next retry (a day) falls past the window: CANCELED.
    await (await usdcOf(payer()).getFunction("approve")(devnet.subscriptions, 0n)).wait();
    period++;
    await advanceTo(p.start + BigInt(period) * p.period);
    await waitFor("PAST_DUE once more", async () => (await sub(s0.id)).status === "PAST_DUE");
    await advanceTo(p.start + BigInt(period) * p.period + 3_600n);
    const canceled = await waitFor("CANCELED after its retries", async () => {
      const s = await sub(s0.id);
      return s.status === "CANCELED" && s;
    });
    expect(canceled).toMatchObject({ cancelReason: "payment_failed", nextPullAt: null });
    expect(await eventTypes(s0.id)).toContain("subscription.canceled");
    const emails = await app.db.prisma.email.findMany({ where: { relatedId: s0.id } });
    // Four kinds once each, then the period whose retry also failed (twice).
    expect(emails.filter((e) => e.type === "invoice_payment_failed")).toHaveLength(6);
    expect(emails.filter((e) => e.type === "subscription_canceled")).toHaveLength(1);

    // The ledger equals the chain: what left the payer is the payments; the merchant and the fee recipient got the payouts and fees.
    const pulled = BigInt(period) * usdc("25");
    await waitFor("every pull confirmed", async () => {
      const rows = await app.db.prisma.balanceTransaction.findMany({ where: { merchantId: scope().merchantId, type: "payment" } });
      return rows.reduce((a, r) => a + BigInt(r.amount.toFixed()), 0n) === pulled;
    });
    const rows = await app.db.prisma.balanceTransaction.findMany({ where: { merchantId: scope().merchantId } });
    const sum = (type: string) => rows.filter((r) => r.type === type).reduce((a, r) => a + BigInt(r.amount.toFixed()), 0n);
    const fee = (usdc("25") * 100n) / 10_000n;
    expect(sum("payment")).toBe(pulled);
    expect(-sum("fee")).toBe(BigInt(period) * fee);
    expect(-sum("payout")).toBe(pulled - BigInt(period) * fee);
    expect((await chain.balance(WALLET)) - merchantBefore).toBe(-sum("payout"));
    expect((await chain.balance(chain.feeRecipient)) - feeBefore).toBe(-sum("fee"));
    // The payer's money (minted once more for a fix, some moved aside to wallet 5) went only to the pulls.
    const payerNow = (await chain.balance(payer().address)) + (await chain.balance(chain.wallet(5).address)) - asideBefore;
    expect(payerBefore + usdc("1000") - payerNow).toBe(pulled);
    // And the reconciliation, which re-reads the recent transfers' receipts, finds the pulls' facts where the ledger has them.
    const rpc = new ChainRpc(devnet.chainId, [chain.anvil.url]);
    try {
      const reconciled = await reconcileChain(app.db.prisma, rpc, devnet);
      expect(reconciled.transfersChecked).toBeGreaterThan(0);
      expect(reconciled.differences).toEqual([]);
    } finally {
      rpc.destroy();
    }
  }, 180_000);

  it("a trial: TRIALING with nothing pulled, the first pull at its end; cancel at period end then ends it", async () => {
    await chain.mint(payer().address, usdc("100"));
    const s0 = await newSubscription({ trialDays: 7 });
    const p = await authorize(s0.id, payer());
    const trialing = await waitFor("TRIALING", async () => {
      const s = await sub(s0.id);
      return s.status === "TRIALING" && s;
    });
    expect(trialing).toMatchObject({ currentPeriodEnd: new Date(Number(p.start) * 1000), nextPullAt: new Date(Number(p.start) * 1000), latestInvoiceId: null });
    expect(await lastPull(s0.id)).toMatchObject({ status: "SUCCEEDED", checkout: true, amount: 0n });

    await advanceTo(p.start);
    const { invoice } = await paidIn(s0.id, 0);
    expect(invoice.billingReason).toBe("subscription_create");

    await cancelSubscription(app.db.prisma, scope(), s0.id, { atPeriodEnd: true, reason: "requested" }, SETTINGS);
    await advanceTo(p.start + p.period);
    const ended = await waitFor("CANCELED at the period's end", async () => {
      const s = await sub(s0.id);
      return s.status === "CANCELED" && s;
    });
    expect(ended.cancelReason).toBe("period_end");
    expect(await app.db.prisma.subscriptionPull.count({ where: { subscriptionId: s0.id } })).toBe(2);
  }, 120_000);

  it("a revoke by the payer on chain cancels at once; a checkout the chain refuses sends nothing and can be authorized again", async () => {
    await chain.mint(payer().address, usdc("100"));
    const s0 = await newSubscription();
    const p = await authorize(s0.id, payer());
    await paidIn(s0.id, 0);
    const contract = new Contract(devnet.subscriptions, subscriptionsInterface, payer());
    await (await contract.getFunction("revoke")([p.payer, p.merchant, p.token, p.spender, p.amount, p.feeBps, p.period, p.start, p.end, p.salt])).wait();
    const revoked = await waitFor("CANCELED revoked_by_payer", async () => {
      const s = await sub(s0.id);
      return s.status === "CANCELED" && s;
    });
    expect(revoked.cancelReason).toBe("revoked_by_payer");

    // A payer with no money: the simulation refuses, nothing is sent, the permission is cleared with the reason kept.
    const broke = chain.wallet(6);
    const s1 = await newSubscription();
    const txsBefore = await app.db.prisma.relayerTransaction.count();
    await authorize(s1.id, broke);
    await waitFor("the checkout refused", async () => (await sub(s1.id)).permission === null);
    expect(await sub(s1.id)).toMatchObject({ status: "INCOMPLETE", permissionHash: null, nextPullAt: null });
    expect(await lastPull(s1.id)).toMatchObject({ status: "FAILED", checkout: true, reason: "insufficient_balance", txId: null });
    expect(await app.db.prisma.relayerTransaction.count()).toBe(txsBefore);
    // The buyer funds the wallet and authorizes again: ACTIVE.
    await chain.mint(broke.address, usdc("100"));
    await authorize(s1.id, broke);
    await paidIn(s1.id, 0);
  }, 120_000);

  it("the test helper's advance moves the devnet's clock to the next pull and answers the renewed subscription; a live key is refused", async () => {
    await chain.mint(payer().address, usdc("100"));
    const s0 = await newSubscription();
    await authorize(s0.id, payer());
    const { s: first } = await paidIn(s0.id, 0);
    const res = await app.call("POST", `/v1/test_helpers/subscriptions/${s0.id}/advance`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: s0.id, status: "ACTIVE", currentPeriodStart: first.currentPeriodEnd!.toISOString() });
    expect(await chainTime()).toBeGreaterThanOrEqual(BigInt(first.currentPeriodEnd!.getTime() / 1000));
    await paidIn(s0.id, 1);
    const live = await app.call("POST", `/v1/test_helpers/subscriptions/${s0.id}/advance`, { key: app.liveKey });
    expectError(live, 400, "test_mode_only");
  }, 120_000);

  it("a deep reorg takes a renewal's pull away: reversed, the charge needs review, the invoice OPEN, PAST_DUE, pulled again in its window", async () => {
    await chain.mint(payer().address, usdc("100"));
    const s0 = await newSubscription();
    const p = await authorize(s0.id, payer());
    await paidIn(s0.id, 0);
    stopProducer();
    const fork = await chain.provider.send("evm_snapshot", []);
    await advanceTo(p.start + p.period);
    const { invoice } = await paidIn(s0.id, 1);
    const first = await waitFor("the renewal's charge COMPLETED", async () => {
      const c = await app.db.prisma.charge.findFirstOrThrow({ where: { invoiceId: invoice.id } });
      return c.status === "COMPLETED" && c;
    });
    stopProducer();
    expect(await chain.provider.send("evm_revert", [fork])).toBe(true);
    // The other branch: longer, past the period's start, without the pull.
    await chain.provider.send("evm_setNextBlockTimestamp", [Number(p.start + p.period + 60n)]);
    await chain.mine(20);
    startProducer();

    const reviewed = await waitFor("the pull reversed and its charge flagged", async () => {
      const c = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: first.id } });
      return c.reviewReason !== null && c;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; the chain runner's last warnings:\n${runnerTrouble()}`);
    });
    expect(reviewed.reviewReason).toMatch(/no longer on chain/);
    const statuses = async () =>
      (
        await app.db.prisma.event.findMany({ where: { type: "subscription.updated", data: { path: ["id"], equals: s0.id } }, orderBy: { createdAt: "asc" } })
      ).map((e) => (e.data as { status: string }).status);
    await waitFor("PAST_DUE after the reorg", async () => (await statuses()).includes("PAST_DUE"));
    expect(await eventTypes(invoice.id)).toContain("invoice.updated");
    // Pulled again in the same window: the invoice PAID by a new charge, the subscription ACTIVE in period 1.
    const again = await paidIn(s0.id, 1);
    expect(again.invoice.id).toBe(invoice.id);
    const charges = await app.db.prisma.charge.findMany({ where: { invoiceId: invoice.id }, orderBy: { createdAt: "asc" } });
    expect(charges.map((c) => c.status)).toEqual(["COMPLETED", "COMPLETED"]);
    const payments = await app.db.prisma.balanceTransaction.findMany({ where: { invoiceId: invoice.id } });
    expect(payments.reduce((a, r) => a + BigInt(r.amount.toFixed()), 0n)).toBe(usdc("25"));
  }, 120_000);

  it("invoice.upcoming and its email three days before a weekly renewal, once", async () => {
    await app.db.prisma.merchant.update({ where: { id: scope().merchantId }, data: { emailInvoices: true } });
    await chain.mint(payer().address, usdc("100"));
    const s0 = await newSubscription({ days: 7 });
    const p = await authorize(s0.id, payer());
    await paidIn(s0.id, 0);
    expect(await eventTypes(s0.id)).not.toContain("invoice.upcoming");
    await advanceTo(p.start + p.period - BigInt(2 * DAY));
    await waitFor("invoice.upcoming", async () => (await eventTypes(s0.id)).includes("invoice.upcoming"));
    await advanceTo(p.start + p.period - BigInt(DAY));
    await chain.mine(3);
    expect((await eventTypes(s0.id)).filter((t) => t === "invoice.upcoming")).toHaveLength(1);
    expect(await app.db.prisma.email.count({ where: { relatedId: s0.id, type: "invoice_upcoming" } })).toBe(1);
  }, 60_000);
});
