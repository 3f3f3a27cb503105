// Refunds on a real anvil with Circle's USDC: the merchant's settlement wallet pays by any means (here
// a plain transfer), and the indexer completes the refund when a confirmed transfer of exactly its
// amount from that wallet to its address appears; the claim page; cancel; isolation.
import { Contract, hexlify, parseUnits, randomBytes, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { blockProducer, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/lib/eip3009.js";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);
const BUYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const OTHER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: ChainRunner;

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(CONFIRMATIONS);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  startProducer();
}, 60_000);
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

/** A block every 100 ms, so confirmations come. */
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

let seq = 0;
/** A charge paid `paid` USDC and COMPLETED (or with partial money confirmed). */
async function paidCharge(paid = "25", amount = "25"): Promise<string> {
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `refund-${++seq}`, amount } })).body;
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  await chain.pay(chain.wallet(3), picked.body.cloneAddress, usdc(paid));
  await waitFor("the payment's confirmation", async () => (await getCharge(charge.id)).amountReceived === Number(paid).toFixed(2));
  return charge.id;
}
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
const getRefund = async (id: string) => (await app.call("GET", `/v1/refunds/${id}`)).body;
const refund = (chargeId: string, body: Record<string, unknown> = {}) => app.call("POST", `/v1/charges/${chargeId}/refunds`, { body });
/** The merchant's wallet (anvil account 1) pays `amount` to `to`. */
const payBack = (to: string, amount: string) => chain.pay(chain.wallet(1), to, usdc(amount));
type AuthorizationFields = Partial<Record<"from" | "to" | "value" | "validAfter" | "validBefore" | "nonce", string | number | bigint>>;
/**
 * An EIP-3009 transferWithAuthorization from the merchant's wallet to BUYER signed by `signer`, as the
 * body of POST /v1/refunds/:id/authorization.
 */
async function signAuthorization(signer: Wallet, over: AuthorizationFields) {
  const token = new Contract(
    await chain.usdc.getAddress(),
    ["function name() view returns (string)", "function version() view returns (string)"],
    chain.provider,
  );
  const domain = {
    name: await token.getFunction("name")(),
    version: await token.getFunction("version")(),
    chainId: devnet.chainId,
    verifyingContract: await chain.usdc.getAddress(),
  };
  const message = {
    from: chain.wallet(1).address,
    to: BUYER,
    value: 0n,
    validAfter: 0,
    validBefore: Math.floor(Date.now() / 1000) + 3600,
    nonce: hexlify(randomBytes(32)),
    ...over,
  };
  const signature = await signer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message);
  // The body names no `to`: the service puts the refund's address there, so a signature for any other fails.
  const { to: _, ...body } = message;
  return { ...body, value: String(message.value), validAfter: String(message.validAfter), validBefore: String(message.validBefore), signature };
}
const submitAuthorization = (id: string, body: object) => app.call("POST", `/v1/refunds/${id}/authorization`, { body });
const eventTypes = async (refundId: string) =>
  (await app.db.prisma.event.findMany({ where: { data: { path: ["id"], equals: refundId } }, orderBy: { createdAt: "asc" } })).map((e) => e.type);

// The reorg test comes last but one: evm_revert also undoes the relayer's confirmed transactions,
// deeper than any confirmations, which leaves a gap in its nonces for the tests after it.
describe("refunds", () => {
  it("a full refund to the merchant's given address completes once the wallet's transfer is confirmed", async () => {
    const chargeId = await paidCharge("25");
    expect(chain.wallet(1).address).toBe(WALLET);
    const made = await refund(chargeId, { address: BUYER.toLowerCase(), reason: "order cancelled" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      object: "refund",
      chargeId,
      amount: "25.00",
      status: "AWAITING_PAYMENT",
      address: BUYER,
      fromAddress: WALLET,
      chainId: devnet.chainId,
      claimUrl: null,
      txHash: null,
    });
    const tx = await payBack(BUYER, "25");
    await waitFor("the refund's completion", async () => (await getRefund(made.body.id)).status === "COMPLETED");
    expect(await getRefund(made.body.id)).toMatchObject({ status: "COMPLETED", txHash: tx });
    expect((await getCharge(chargeId)).amountRefunded).toBe("25.00");
    expect(await eventTypes(made.body.id)).toEqual(["refund.created", "refund.completed"]);
    expectError(await refund(chargeId), 409, "charge_not_refundable", "id");
    expectError(await app.call("POST", `/v1/refunds/${made.body.id}/cancel`), 409, "refund_not_cancellable", "id");
  });

  it("partial refunds up to what is refundable; a wrong amount or address does not complete one; two equal refunds need two transfers", async () => {
    const chargeId = await paidCharge("10");
    expectError(await refund(chargeId, { amount: "10.01", address: BUYER }), 400, "refund_exceeds_refundable", "amount");
    expectError(await refund(chargeId, { amount: "0", address: BUYER }), 400, "parameter_invalid", "amount");
    expectError(await refund(chargeId, { address: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bC" }), 400, "parameter_invalid", "address");
    const first = (await refund(chargeId, { amount: "3", address: OTHER })).body;
    const second = (await refund(chargeId, { amount: "3", address: OTHER })).body;
    const rest = (await refund(chargeId, { address: BUYER })).body;
    expect(rest.amount).toBe("4.00");
    expectError(await refund(chargeId, { amount: "0.01" }), 409, "charge_not_refundable", "id");

    // Not from the settlement wallet, not the exact amount, not to the address: none counts.
    await chain.pay(chain.wallet(5), OTHER, usdc("3"));
    await payBack(OTHER, "2.99");
    await payBack(BUYER, "3");
    await chain.mine(CONFIRMATIONS + 3);
    await runnerPassed(runner, chain.provider);
    for (const r of [first, second, rest]) expect((await getRefund(r.id)).status).toBe("AWAITING_PAYMENT");

    // One transfer of 3.00 to OTHER completes one refund, the oldest; the next one completes the other.
    const one = await payBack(OTHER, "3");
    await waitFor("one refund's completion", async () => (await getRefund(first.id)).status === "COMPLETED");
    await chain.mine(CONFIRMATIONS + 2);
    await runnerPassed(runner, chain.provider);
    expect((await getRefund(second.id)).status).toBe("AWAITING_PAYMENT");
    const two = await payBack(OTHER, "3");
    await waitFor("the other refund's completion", async () => (await getRefund(second.id)).status === "COMPLETED");
    expect([(await getRefund(first.id)).txHash, (await getRefund(second.id)).txHash]).toEqual([one, two]);
    expect((await getCharge(chargeId)).amountRefunded).toBe("6.00");

    const cancelled = await app.call("POST", `/v1/refunds/${rest.id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: "CANCELLED", cancelledAt: expect.any(String) });
    expect((await app.call("POST", `/v1/refunds/${rest.id}/cancel`)).body.status).toBe("CANCELLED");
    // Cancelled, its 4.00 is refundable again; a transfer for it now completes nothing.
    await payBack(BUYER, "4");
    await chain.mine(CONFIRMATIONS + 2);
    await runnerPassed(runner, chain.provider);
    expect((await getRefund(rest.id)).status).toBe("CANCELLED");
    expect((await refund(chargeId, { address: BUYER })).body.amount).toBe("4.00");
    const listed = await app.call("GET", `/v1/refunds?chargeId=${chargeId}&status=COMPLETED`);
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
  });

  it("without an address the buyer gives one at the claim page, typed twice; the link then shows the refund's status", async () => {
    const chargeId = await paidCharge("8");
    const made = (await refund(chargeId, { amount: "5" })).body;
    expect(made).toMatchObject({ status: "AWAITING_ADDRESS", address: null });
    expect(made.claimUrl).toMatch(new RegExp(`/pay/refunds/${made.id}\\?token=[0-9A-Za-z]{32}$`));
    const path = new URL(made.claimUrl).pathname + new URL(made.claimUrl).search;
    const page = await fetch(`${app.url}${path}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain("Refund of 5.00 USDC");
    expect(html).toContain("Local devnet");
    expect((await fetch(`${app.url}/pay/refunds/${made.id}?token=${"x".repeat(32)}`)).status).toBe(404);

    const token = new URL(made.claimUrl).searchParams.get("token")!;
    const post = (address: string, confirmAddress: string) =>
      fetch(`${app.url}/pay/refunds/${made.id}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, address, confirmAddress }).toString(),
      });
    const mismatch = await post(BUYER, OTHER);
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain("The two addresses differ");
    const badChecksum = await post("0x3c44cdddb6a900fa2b585dd299e03d12fa4293bC", "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bC");
    expect(badChecksum.status).toBe(400);
    expect(await badChecksum.text()).toContain("not a valid checksummed EVM address");
    expect((await getRefund(made.id)).status).toBe("AWAITING_ADDRESS");

    const claimed = await post(BUYER.toLowerCase(), BUYER);
    expect(claimed.status).toBe(200);
    expect(await claimed.text()).toContain(BUYER);
    expect(await getRefund(made.id)).toMatchObject({ status: "AWAITING_PAYMENT", address: BUYER, claimUrl: null });
    const after = await fetch(`${app.url}${path}`);
    expect(after.status).toBe(200);
    const status = await after.text();
    expect(status).toContain(`<strong>Claimed</strong>`);
    expect(status).not.toContain("<form");
    await payBack(BUYER, "5");
    await waitFor("the claimed refund's completion", async () => (await getRefund(made.id)).status === "COMPLETED");
    const done = await (await fetch(`${app.url}${path}`)).text();
    expect(done).toContain(`<strong>Completed</strong>: 5.00 USDC arrived at ${BUYER} on Local devnet.`);
    // The devnet has no explorer: the transaction's hash as text.
    expect(done).toContain(`<code class="address">${(await getRefund(made.id)).txHash}</code>`);
    expect(await eventTypes(made.id)).toEqual(["refund.created", "refund.updated", "refund.completed"]);
  });

  it("pays a refund with an EIP-3009 authorization the settlement wallet signed, relayed with the relayer's gas; refuses bad ones", async () => {
    const chargeId = await paidCharge("9");
    const made = (await refund(chargeId, { amount: "4", address: BUYER })).body;
    const merchant = chain.wallet(1);
    await chain.mint(merchant.address, usdc("20"));
    const now = Math.floor(Date.now() / 1000);
    const sign = (signer: Wallet, over: AuthorizationFields = {}) => signAuthorization(signer, { value: usdc("4"), validBefore: now + 3600, ...over });

    const submit = submitAuthorization;
    const reason = async (body: object) => {
      const res = await submit(made.id, body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe("authorization_invalid");
      return res.body.message as string;
    };
    expect(await reason(await sign(chain.wallet(5)))).toMatch(/not the settlement wallet's/);
    expect(await reason({ ...(await sign(merchant)), value: String(usdc("3")) })).toMatch(/value must be the refund's amount/);
    expect(await reason(await sign(merchant, { value: usdc("3") }))).toMatch(/value must be the refund's amount/);
    expect(await reason(await sign(merchant, { to: OTHER }))).toMatch(/not the settlement wallet's/);
    expect(await reason(await sign(merchant, { validBefore: now + 30 }))).toMatch(/at least 60 s/);
    expect(await reason(await sign(merchant, { validAfter: now + 600 }))).toMatch(/not valid yet/);
    // Money on its way until validBefore: an hour at most, so that a lock ends.
    expect(await reason(await sign(merchant, { validBefore: now + 7200 }))).toMatch(/at most 3600 s/);
    expect(await reason({ ...(await sign(merchant)), from: chain.wallet(5).address })).toMatch(/settlement wallet/);
    expect((await getRefund(made.id)).authorization).toBeNull();

    const good = await sign(merchant);
    const gasBefore = await chain.provider.getBalance(merchant.address);
    const [first, second] = await Promise.all([submit(made.id, good), submit(made.id, good)]);
    expect([first.status, second.status].sort()).toEqual([202, 409]);
    const accepted = first.status === 202 ? first : second;
    expect(accepted.body).toMatchObject({ id: made.id, status: "AWAITING_PAYMENT", authorization: { status: "relaying", error: null, onItsWay: true } });
    await waitFor("the relayed refund's completion", async () => (await getRefund(made.id)).status === "COMPLETED");
    // Spent on chain (its nonce used, confirmed): no longer money on its way.
    const done = await waitFor("the authorization spent", async () => {
      const a = (await getRefund(made.id)).authorization;
      return a.onItsWay === false && a.status === "mined" ? a : undefined;
    });
    expect(done).toEqual({ status: "mined", error: null, onItsWay: false, validBefore: new Date((now + 3600) * 1000).toISOString() });
    // The relayer paid the gas: the merchant's wallet spent USDC only.
    expect(await chain.provider.getBalance(merchant.address)).toBe(gasBefore);
    expect(await app.db.prisma.relayerTransaction.count({ where: { kind: "AUTHORIZATION" } })).toBe(1);

    // The same signed authorization again: for a completed refund, then for a new one (its nonce is used).
    expect((await submit(made.id, good)).status).toBe(409);
    const again = (await refund(chargeId, { amount: "4", address: BUYER })).body;
    const replayed = await submit(again.id, good);
    expectError(replayed, 400, "authorization_invalid", "nonce");
  });

  it("relayed and waiting in the mempool: the refund cannot be cancelled, nothing more is refundable, no other authorization is taken; paid once", async () => {
    const chargeId = await paidCharge("10");
    const buyer = Wallet.createRandom().address;
    const made = (await refund(chargeId, { address: buyer })).body;
    await chain.mint(WALLET, usdc("10"));
    stopProducer();
    await chain.automine(false);
    try {
      expect((await submitAuthorization(made.id, await signAuthorization(chain.wallet(1), { to: buyer, value: usdc("10") }))).status).toBe(202);
      await waitFor("the relayed transaction in the mempool", async () => (await getRefund(made.id)).authorization.status === "sent");
      const cancel = await app.call("POST", `/v1/refunds/${made.id}/cancel`);
      expectError(cancel, 409, "refund_payment_on_its_way", "id");
      expect(cancel.body.message).toMatch(/authorization/);
      expectError(await refund(chargeId, { address: buyer }), 409, "charge_not_refundable", "id");
      const twin = await submitAuthorization(made.id, await signAuthorization(chain.wallet(1), { to: buyer, value: usdc("10") }));
      expectError(twin, 409, "refund_not_payable", "id");
      expect(await getRefund(made.id)).toMatchObject({ status: "AWAITING_PAYMENT", authorization: { status: "sent", onItsWay: true } });
    } finally {
      await chain.automine(true);
      startProducer();
    }
    await waitFor("the refund's completion", async () => (await getRefund(made.id)).status === "COMPLETED");
    expect(await chain.balance(buyer)).toBe(usdc("10"));
    expect((await getCharge(chargeId)).amountRefunded).toBe("10.00");
    expect(await app.db.prisma.refund.count({ where: { chargeId } })).toBe(1);
  });

  it("a reverted relay keeps the refund locked until validBefore; the same authorization replayed by anyone completes it, matched by its nonce", async () => {
    const charge = await paidCharge("5", "5");
    // The charge's payout is done: nothing else moves the merchant wallet's USDC during the test.
    await waitFor("the payout", async () => (await getCharge(charge)).flushTxHash !== null);
    const buyer = Wallet.createRandom().address;
    const made = (await refund(charge, { address: buyer })).body;
    const merchant = chain.wallet(1);
    await chain.mint(merchant.address, usdc("5"));
    const signed = await signAuthorization(merchant, { to: buyer, value: usdc("5") });
    stopProducer();
    await chain.automine(false);
    try {
      expect((await submitAuthorization(made.id, signed)).status).toBe(202);
      await waitFor("the relayed transaction in the mempool", async () => (await getRefund(made.id)).authorization.status === "sent");
      // The wallet moves all its USDC away in the same block, ahead of the relay: the relay reverts.
      const all = await chain.balance(merchant.address);
      await (chain.usdc.connect(merchant) as Contract).getFunction("transfer")(OTHER, all, {
        gasLimit: 100_000,
        maxPriorityFeePerGas: 50n * 10n ** 9n,
        maxFeePerGas: 100n * 10n ** 9n,
      });
      await chain.mine(1);
    } finally {
      await chain.automine(true);
      startProducer();
    }
    const failed = await waitFor("the relay's failure", async () => {
      const a = (await getRefund(made.id)).authorization;
      return a.status === "failed" ? a : undefined;
    });
    // Its nonce was never used: whoever holds the signature can still spend it, so it stays on its way.
    expect(failed).toMatchObject({ error: "its transaction reverted", onItsWay: true });
    expectError(await app.call("POST", `/v1/refunds/${made.id}/cancel`), 409, "refund_payment_on_its_way", "id");
    expectError(await submitAuthorization(made.id, await signAuthorization(merchant, { to: buyer, value: usdc("5") })), 409, "refund_not_payable", "id");
    expect(await chain.balance(buyer)).toBe(0n);

    // Later the wallet has USDC again and a stranger replays the first authorization from its public calldata.
    await chain.mint(merchant.address, usdc("5"));
    const token = new Contract(
      await chain.usdc.getAddress(),
      ["function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)"],
      chain.wallet(6),
    );
    const replay = await token.getFunction("transferWithAuthorization")(
      merchant.address,
      buyer,
      usdc("5"),
      signed.validAfter,
      signed.validBefore,
      signed.nonce,
      signed.signature,
    );
    const done = await waitFor("the refund's completion by the replay", async () => {
      const r = await getRefund(made.id);
      return r.status === "COMPLETED" ? r : undefined;
    });
    expect(done).toMatchObject({ txHash: replay.hash, authorization: { onItsWay: false } });
    expect(await chain.balance(buyer)).toBe(usdc("5"));
    expect((await getCharge(charge)).amountRefunded).toBe("5.00");
    expectError(await refund(charge, { address: buyer }), 409, "charge_not_refundable", "id");
  });

  it("a refund's transfer removed by a reorg before its confirmations does not complete it; the next one does", async () => {
    const chargeId = await paidCharge("6");
    const made = (await refund(chargeId, { address: BUYER })).body;
    stopProducer();
    const snapshot = await chain.provider.send("evm_snapshot", []);
    const orphan = await payBack(BUYER, "6");
    await waitFor("the transfer to be seen", async () => (await app.db.prisma.refund.findUnique({ where: { id: made.id } }))?.txHash === orphan);
    expect(await getRefund(made.id)).toMatchObject({ status: "AWAITING_PAYMENT", txHash: orphan });
    // Its transfer is on chain: cancelling now would free the amount for a second payment.
    const refused = await app.call("POST", `/v1/refunds/${made.id}/cancel`);
    expectError(refused, 409, "refund_payment_on_its_way", "id");
    expect(refused.body.message).toMatch(/waiting for confirmations/);
    expect(await chain.provider.send("evm_revert", [snapshot])).toBe(true);
    await chain.mine(CONFIRMATIONS + 2);
    await waitFor("the reorg to be noticed", async () => (await app.db.prisma.refund.findUnique({ where: { id: made.id } }))?.txHash === null);
    await chain.mine(CONFIRMATIONS + 2);
    await runnerPassed(runner, chain.provider);
    expect((await getRefund(made.id)).status).toBe("AWAITING_PAYMENT");
    startProducer();
    const replacement = await payBack(BUYER, "6");
    await waitFor("the refund's completion", async () => (await getRefund(made.id)).status === "COMPLETED");
    expect((await getRefund(made.id)).txHash).toBe(replacement);
  });

  it("refuses a charge without confirmed money, and another merchant's charge or refund (404)", async () => {
    const pending = (await app.call("POST", "/v1/charges", { body: { orderId: `refund-none-${++seq}`, amount: "5" } })).body;
    expectError(await refund(pending.id, { address: BUYER }), 409, "charge_not_refundable", "id");
    const chargeId = await paidCharge("2");
    const mine = (await refund(chargeId, { address: BUYER })).body;
    const other = await app.newMerchant();
    const theirKey = other.apiKeys.test.secret;
    expectError(await app.call("POST", `/v1/charges/${chargeId}/refunds`, { key: theirKey, body: {} }), 404, "resource_missing", "id");
    expectError(await app.call("GET", `/v1/refunds/${mine.id}`, { key: theirKey }), 404, "resource_missing", "id");
    expectError(await app.call("POST", `/v1/refunds/${mine.id}/cancel`, { key: theirKey }), 404, "resource_missing", "id");
    expect((await app.call("GET", "/v1/refunds", { key: theirKey })).body.data).toEqual([]);
    expectError(await app.call("GET", `/v1/refunds/${mine.id}`, { key: app.liveKey }), 404, "resource_missing", "id");
    const gql = await app.gql("query($id: ID!) { charge(id: $id) { amountRefunded refunds { id status amount } } }", { id: chargeId });
    expect(gql.data.charge).toEqual({ amountRefunded: "0.00", refunds: [{ id: mine.id, status: "AWAITING_PAYMENT", amount: "2.00" }] });
  });
});
