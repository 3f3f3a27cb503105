// The buyer's pick of a chain (nothing is sent on chain: the address is known from the charge's
// creation) and the relayer's nonces: every transaction of ours is mined once whichever step the
// worker died after, and a gap in the nonces (a transaction a reorg took away, a nonce cached ahead
// of the chain) is filled rather than waited behind.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { predictCloneV2 } from "../../src/chain/clones.js";
import { Relayer } from "../../src/chain/relayer.js";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { newId } from "../../src/domain/ids.js";
import { relayerTxHandlers } from "../../src/jobs/chain-runner.js";
import { resendStored, sendRelayerTx, trackRelayerTxs } from "../../src/jobs/relayer-txs.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { expectError, liveChains, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

let chain: TestChain;
let app: TestApp;
let chains: ChainSet;
const logger = pino({ level: "silent" });

beforeAll(async () => {
  chain = await startTestChain();
  // A live chain too (nothing calls it): live charges need one.
  chains = liveChains([await chain.enabled(1)]);
  app = await startApp(POLLING, { chains });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
const newCharge = async (key = app.testKey, body: Record<string, unknown> = {}) =>
  (await app.call("POST", "/v1/charges", { body: { orderId: `sel-${++seq}`, amount: "25", ...body }, key })).body;
const select = (id: string, body: unknown = { chainId: 31337 }) => app.call("POST", `/v1/public/charges/${id}/chain`, { body, key: null });
const relayerNonce = () => chain.provider.getTransactionCount(chain.deployer.address, "latest");

describe("public view", () => {
  it("shows the hosted page what it needs, the mode's chains, and never caches", async () => {
    const charge = await newCharge(app.testKey, { description: "Mugs" });
    const res = await app.call("GET", `/v1/public/charges/${charge.id}`, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body).toEqual({
      id: charge.id,
      orderId: charge.orderId,
      amount: "25.00",
      currency: "USDC",
      status: "PENDING",
      amountReceived: null,
      amountRemaining: "25.00",
      amountOverpaid: "0.00",
      amountPending: "0.00",
      confirmationsRequired: null,
      payments: [],
      chainId: null,
      cloneAddress: null,
      flushTxHash: null,
      expiresAt: charge.expiresAt,
      description: "Mugs",
      merchantName: "Test Shop",
      paymentWindowMinutes: 15,
      successUrl: null,
      cancelUrl: null,
      livemode: false,
      chains: [{ chainId: 31337, name: "Local devnet", usdcAddress: await chain.usdc.getAddress(), explorerUrl: null }],
      statusMessage: "Choose a network to pay on.",
    });
    const live = await newCharge(app.liveKey);
    const liveView = await app.call("GET", `/v1/public/charges/${live.id}`, { key: null });
    expect(liveView.body.chains.map((c: { chainId: number }) => c.chainId)).toEqual([8453]);
    expectError(await app.call("GET", `/v1/public/charges/${newId("chrg")}`, { key: null }), 404, "resource_missing", "id");
  });
});

describe("chain selection", () => {
  it("shows the address known since creation, fixes the confirmations and payment window, records the event, and sends nothing", async () => {
    const charge = await newCharge();
    const predicted = predictCloneV2({ factory: chains.get(31337)!.factory, chargeId: charge.id, wallet: WALLET, feeBps: 100 });
    expect((await app.db.prisma.charge.findUniqueOrThrow({ where: { id: charge.id } })).depositAddress).toBe(predicted);
    const nonce = await relayerNonce();
    const before = Date.now();
    const res = await select(charge.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ chainId: 31337, cloneAddress: predicted });
    const row = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: charge.id }, include: { clones: true } });
    expect(row).toMatchObject({ chainId: 31337, confirmations: 1, cloneAddress: predicted, deployedAt: null });
    expect(row.expiresAt.getTime() - before).toBeGreaterThan(14 * 60_000);
    expect(row.expiresAt.getTime() - before).toBeLessThan(16 * 60_000);
    // The worker compares the address with the ledger at once (money may have come before the pick).
    expect(row.clones).toEqual([expect.objectContaining({ chainId: 31337, address: predicted, version: 2, balanceCheckedAt: null, deployedAt: null })]);
    const events = await app.db.prisma.event.findMany({ where: { type: "charge.chain_selected" } });
    expect(events.map((e) => (e.data as { id: string }).id)).toContain(charge.id);
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body).toMatchObject({ chainId: 31337, cloneAddress: predicted, explorerUrl: null });
    expect(await chain.provider.getCode(predicted)).toBe("0x");
    expect(await relayerNonce()).toBe(nonce);
  });

  it("costs no gas however many are made: a flood of picks through a payment link sends no transaction", async () => {
    const link = (await app.call("POST", "/v1/payment_links", { body: { name: "Flood", amount: "1" } })).body;
    const nonce = await relayerNonce();
    const block = await chain.provider.getBlockNumber();
    // 20: the most one address may make from one link in a minute (the link's own limit).
    for (let i = 0; i < 20; i++) {
      const pressed = await fetch(`${app.url}/pay/l/${link.id}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "",
      });
      const id = /chrg_[0-9A-Za-z]{24}/.exec(pressed.headers.get("location") ?? "")?.[0];
      expect(id, `press ${i}: ${pressed.status}`).toBeDefined();
      expect((await select(id!)).status).toBe(200);
    }
    expect(await relayerNonce()).toBe(nonce);
    expect(await chain.provider.getBlockNumber()).toBe(block);
  });

  it("lets exactly one of ten racing selections win", async () => {
    const charge = await newCharge();
    const results = await Promise.all(Array.from({ length: 10 }, () => select(charge.id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    for (const r of results.filter((r) => r.status === 409)) expectError(r, 409, "chain_already_selected", "chainId");
    expect(await app.db.prisma.clone.count({ where: { chargeId: charge.id } })).toBe(1);
  });

  it("refuses unsupported and wrong-mode chains, unknown charges and charges that cannot be paid", async () => {
    const charge = await newCharge();
    expectError(await select(charge.id, { chainId: 8453 }), 400, "chain_unsupported", "chainId");
    expectError(await select(charge.id, { chainId: 999_999 }), 400, "chain_unsupported", "chainId");
    expectError(await select(charge.id, { chainId: "31337" }), 400, "parameter_invalid", "chainId");
    expectError(await select(charge.id, {}), 400, "parameter_missing", "chainId");
    expectError(await select(charge.id, { chainId: 31337, extra: 1 }), 400, "parameter_unknown", "extra");
    expectError(await select(newId("chrg")), 404, "resource_missing", "id");
    expectError(await select((await newCharge(app.liveKey)).id), 400, "chain_unsupported", "chainId");

    const cancelled = await newCharge();
    await app.call("DELETE", `/v1/charges/${cancelled.id}`);
    expectError(await select(cancelled.id), 409, "charge_not_payable", null);
    const expired = await newCharge(app.testKey, { expiresInMinutes: 5 });
    await expireDueCharges(app.db.prisma, SETTINGS, new Date(Date.now() + 3_600_000));
    expectError(await select(expired.id), 409, "charge_not_payable", null);
    expect(await app.db.prisma.clone.count({ where: { chargeId: { in: [charge.id, cancelled.id, expired.id] } } })).toBe(0);
  });

  it("works over GraphQL: paymentSession and selectPaymentChain without a key", async () => {
    const charge = await newCharge();
    const q = await app.gql(`query($id: ID!) { paymentSession(chargeId: $id) { id amountRemaining chains { chainId name } } }`, { id: charge.id }, null);
    expect(q.data.paymentSession).toEqual({ id: charge.id, amountRemaining: "25.00", chains: [{ chainId: 31337, name: "Local devnet" }] });
    const m = await app.gql(`mutation($id: ID!) { selectPaymentChain(chargeId: $id, chainId: 31337) { chainId cloneAddress } }`, { id: charge.id }, null);
    expect(m.data.selectPaymentChain.chainId).toBe(31337);
    const again = await app.gql(`mutation($id: ID!) { selectPaymentChain(chargeId: $id, chainId: 31337) { chainId } }`, { id: charge.id }, null);
    expect(again.errors?.[0].extensions).toMatchObject({ code: "chain_already_selected", statusCode: 409 });
    expect((await app.gql(`{ chains { chainId } }`)).data.chains).toEqual([{ chainId: 31337 }]);
  });
});

describe("the relayer's nonces", () => {
  const handlers = (relayer: Relayer) => relayerTxHandlers(app.db.prisma, relayer, SETTINGS, logger, () => new Date());
  /** A harmless transaction of the relayer's (to itself), stored before it is sent as the worker stores every one. */
  const harmless = (relayer: Relayer) => ({ to: relayer.address, data: "0x" });
  const track = (relayer: Relayer, bumpAfterMs = 60_000) =>
    trackRelayerTxs(app.db.prisma, relayer, BigInt(1e12), handlers(relayer), { bumpAfterMs, now: () => new Date() }, logger);
  /** Follows the relayer's transactions until none is open. */
  async function drain(relayer: Relayer, bumpAfterMs = 60_000): Promise<void> {
    for (let i = 0; i < 100; i++) {
      await chain.mine();
      await track(relayer, bumpAfterMs);
      if ((await app.db.prisma.relayerTransaction.count({ where: { chainId: 31337, status: { in: ["SENT", "MINED"] } } })) === 0) return;
    }
    throw new Error("relayer transactions never finished");
  }
  /** Signs a transaction and stores it as SENT, as the worker does, without broadcasting it. */
  async function storeUnsent(relayer: Relayer) {
    const signed = await relayer.sign(harmless(relayer));
    await app.db.prisma.relayerTransaction.create({
      data: { id: newId("rtx"), chainId: 31337, kind: "FILL", nonce: signed.nonce, rawTx: signed.raw, txHashes: [signed.hash] },
    });
    return signed;
  }

  it("mines each transaction once whichever step the worker died after", async () => {
    const info = chains.get(31337)!;
    // A: signed and stored as SENT, then the process died before broadcasting it: the very same
    // transaction is sent after the restart.
    const before = await relayerNonce();
    const dying = new Relayer(info);
    const signedA = await storeUnsent(dying);
    dying.close();
    const restarted = new Relayer(info);
    await resendStored(app.db.prisma, restarted);
    await drain(restarted);
    expect(await relayerNonce()).toBe(before + 1);
    expect((await chain.provider.getTransactionReceipt(signedA.hash))?.status).toBe(1);

    // B: broadcast and mined, but the process died before recording that: nothing new is sent.
    const crashing = new Relayer(info);
    const signedB = await storeUnsent(crashing);
    await crashing.broadcast(signedB.raw);
    await chain.provider.waitForTransaction(signedB.hash);
    crashing.close();
    const afterB = await relayerNonce();
    const again = new Relayer(info);
    await resendStored(app.db.prisma, again);
    await drain(again);
    expect(await relayerNonce()).toBe(afterB);
    restarted.close();
    again.close();
  });

  it("heals a gap a deep reorg left: the lost transaction is sent again and the one waiting behind it is mined", async () => {
    const relayer = new Relayer(chains.get(31337)!);
    try {
      await drain(relayer);
      const snapshot = await chain.provider.send("evm_snapshot", []);
      const lost = await sendRelayerTx(app.db.prisma, relayer, "FILL", harmless(relayer), async () => true);
      await drain(relayer);
      const gap = await relayerNonce();
      // A reorg deeper than the confirmations takes it away; the relayer's cached nonce stays ahead.
      await chain.provider.send("evm_revert", [snapshot]);
      expect(await relayerNonce()).toBe(gap - 1);
      const behind = await sendRelayerTx(app.db.prisma, relayer, "FILL", harmless(relayer), async () => true);
      const waiting = await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: behind! } });
      expect(waiting.nonce).toBe(gap);
      await chain.mine(3);
      // Waiting behind a nonce nobody will use: nothing moves until the gap is filled.
      expect(await relayerNonce()).toBe(gap - 1);
      await drain(relayer, 0);
      expect(await relayerNonce()).toBe(gap + 1);
      expect(await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: lost! } })).toMatchObject({ status: "CONFIRMED" });
      expect(await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: behind! } })).toMatchObject({ status: "CONFIRMED" });
    } finally {
      relayer.close();
    }
  });

  it("fills a gap no stored transaction covers with one that does nothing, and forgets a cached nonce ahead of an idle chain", async () => {
    const relayer = new Relayer(chains.get(31337)!);
    try {
      await drain(relayer);
      const start = await relayerNonce();
      // A signature thrown away without the nonce given back: the cache is one ahead, nothing waits.
      await relayer.sign(harmless(relayer));
      await track(relayer, 0);
      expect(relayer.cachedNonce).toBeNull();
      const next = await sendRelayerTx(app.db.prisma, relayer, "FILL", harmless(relayer), async () => true);
      expect((await app.db.prisma.relayerTransaction.findUniqueOrThrow({ where: { id: next! } })).nonce).toBe(start);
      await drain(relayer);
      // The same with a transaction waiting behind the hole: a filler goes in the hole.
      await relayer.sign(harmless(relayer));
      const behind = await sendRelayerTx(app.db.prisma, relayer, "FILL", harmless(relayer), async () => true);
      await drain(relayer, 0);
      const rows = await app.db.prisma.relayerTransaction.findMany({ where: { chainId: 31337, nonce: { gte: start + 1 } }, orderBy: { nonce: "asc" } });
      expect(rows.map((r) => [r.nonce, r.status])).toEqual([
        [start + 1, "CONFIRMED"],
        [start + 2, "CONFIRMED"],
      ]);
      expect(rows[1]!.id).toBe(behind);
      expect(await relayerNonce()).toBe(start + 3);
    } finally {
      relayer.close();
    }
  });
});
