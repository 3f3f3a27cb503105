// Refunds where the money is (.docs/refunds.md "On which chain"), on two anvils standing in for two
// test-mode chains (31337 and 84532) that share ChargeFactoryV2's address, so a charge's address is
// the same on both: a charge picked on A and paid on B is refunded on B (by a plain transfer, or an
// authorization signed for B's USDC and relayed on B); an unpicked charge paid to its computed address
// is refunded where the money arrived; with money on both, `chainId` picks one and each chain is bounded
// by its own money.
import { Contract, hexlify, parseUnits, randomBytes, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/lib/eip3009.js";

const CONFIRMATIONS = 2;
const usdc = (s: string) => parseUnits(s, 6);
// Not an anvil account: the fee recipient (account 2) receives fees while the test runs.
const BUYER = Wallet.createRandom().address;

let a: TestChain;
let b: TestChain;
let chainA: EnabledChain;
let chainB: EnabledChain;
let app: TestApp;
const runners: Periodic[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startTestChain(), startTestChain({ chainId: 84532 })]);
  [chainA, chainB] = await Promise.all([a.enabled(CONFIRMATIONS), b.enabled(CONFIRMATIONS)]);
  app = await startApp(POLLING, { chains: new ChainSet([chainA, chainB]) });
  for (const chain of [chainA, chainB]) {
    runners.push(
      startChainRunner(app.db, chain, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 }),
    );
  }
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  for (const r of runners) await r.stop();
  await app?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
});

/** A block every 100 ms on both chains, so confirmations come. */
const producer = setInterval(() => {
  for (const c of [a, b]) void c?.mine().catch(() => {});
}, 100);

let seq = 0;
/** A charge of `amount`, its chain picked unless `pick` is null; with its address (the same on both chains). */
async function charge(amount: string, pick: EnabledChain | null): Promise<{ id: string; address: string }> {
  const made = (await app.call("POST", "/v1/charges", { body: { orderId: `refund-chains-${++seq}`, amount } })).body;
  const { depositAddress } = await app.db.prisma.charge.findUniqueOrThrow({ where: { id: made.id } });
  if (pick) expect((await app.call("POST", `/v1/public/charges/${made.id}/chain`, { body: { chainId: pick.chainId }, key: null })).status).toBe(200);
  return { id: made.id, address: depositAddress! };
}
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
const getRefund = async (id: string) => (await app.call("GET", `/v1/refunds/${id}`)).body;
const received = (id: string, amount: string) => waitFor(`${amount} confirmed`, async () => (await getCharge(id)).amountReceived === amount);
const refund = (chargeId: string, body: Record<string, unknown>) => app.call("POST", `/v1/charges/${chargeId}/refunds`, { body });
const completed = (id: string) => waitFor("the refund's completion", async () => (await getRefund(id)).status === "COMPLETED");
const refundable = async (id: string) =>
  (await app.gql("query($id: ID!) { charge(id: $id) { refundable { chainId received left } } }", { id })).data.charge.refundable;

/** An EIP-3009 transferWithAuthorization of `value` from the merchant's wallet to BUYER, signed for `chain`'s USDC. */
async function signFor(chain: TestChain, chainId: number, signer: Wallet, value: bigint) {
  const token = new Contract(
    await chain.usdc.getAddress(),
    ["function name() view returns (string)", "function version() view returns (string)"],
    chain.provider,
  );
  const domain = {
    name: await token.getFunction("name")(),
    version: await token.getFunction("version")(),
    chainId,
    verifyingContract: await chain.usdc.getAddress(),
  };
  const message = { from: signer.address, to: BUYER, value, validAfter: 0, validBefore: Math.floor(Date.now() / 1000) + 3600, nonce: hexlify(randomBytes(32)) };
  const signature = await signer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message);
  return { from: message.from, value: String(value), validAfter: "0", validBefore: String(message.validBefore), nonce: message.nonce, signature };
}

describe("refunds on the chain where the money arrived", () => {
  it("picked on A, paid on B: refunded on B, by the wallet's transfer there or an authorization relayed there; A is refused", async () => {
    const { id, address } = await charge("10", chainA);
    await b.pay(b.wallet(3), address, usdc("10"));
    await received(id, "10.00");
    expect(await refundable(id)).toEqual([{ chainId: chainB.chainId, received: "10.00", left: "10.00" }]);

    const onA = await refund(id, { chainId: chainA.chainId, address: BUYER });
    expectError(onA, 400, "parameter_invalid", "chainId");
    expect(onA.body.message).toContain("Base Sepolia (84532) 10.00 USDC left");

    const first = await refund(id, { amount: "4", address: BUYER });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ chainId: chainB.chainId, amount: "4.00", status: "AWAITING_PAYMENT" });
    const buyerBefore = await b.balance(BUYER);
    await b.pay(b.wallet(1), BUYER, usdc("4"));
    await completed(first.body.id);

    // The rest, paid by an authorization the wallet signed for B's USDC: checked against B and relayed there.
    const rest = (await refund(id, { address: BUYER })).body;
    expect(rest).toMatchObject({ chainId: chainB.chainId, amount: "6.00" });
    await b.mint(b.wallet(1).address, usdc("6"));
    const relayed = await app.call("POST", `/v1/refunds/${rest.id}/authorization`, { body: await signFor(b, chainB.chainId, b.wallet(1), usdc("6")) });
    expect(relayed.status, relayed.text).toBe(202);
    await completed(rest.id);
    expect(await b.balance(BUYER)).toBe(buyerBefore + usdc("10"));
    expect(await app.db.prisma.relayerTransaction.findMany({ where: { kind: "AUTHORIZATION" }, select: { chainId: true } })).toEqual([
      { chainId: chainB.chainId },
    ]);
    expect((await getCharge(id)).amountRefunded).toBe("10.00");
    expect(await refundable(id)).toEqual([{ chainId: chainB.chainId, received: "10.00", left: "0.00" }]);
    expectError(await refund(id, { address: BUYER }), 409, "charge_not_refundable", "id");
  });

  it("never picked, paid to its computed address on B: refunded on B (GraphQL too)", async () => {
    const { id, address } = await charge("5", null);
    await b.pay(b.wallet(3), address, usdc("5"));
    await received(id, "5.00");
    expect((await getCharge(id)).chainId).toBeNull();
    const made = await app.gql('mutation($id: ID!) { createRefund(chargeId: $id, input: { amount: "2", address: "' + BUYER + '" }) { id chainId amount } }', {
      id,
    });
    expect(made.errors).toBeUndefined();
    expect(made.data.createRefund).toMatchObject({ chainId: chainB.chainId, amount: "2.00" });
    await b.pay(b.wallet(1), BUYER, usdc("2"));
    await completed(made.data.createRefund.id);
    const rest = await refund(id, {});
    expect(rest.body).toMatchObject({ chainId: chainB.chainId, amount: "3.00", status: "AWAITING_ADDRESS" });
  });

  it("money on both chains: chainId picks one (required while both have money left), each bounded by its own money", async () => {
    const { id, address } = await charge("10", chainA);
    await a.pay(a.wallet(3), address, usdc("3"));
    await b.pay(b.wallet(3), address, usdc("7"));
    await received(id, "10.00");
    expect(await refundable(id)).toEqual([
      { chainId: chainA.chainId, received: "3.00", left: "3.00" },
      { chainId: chainB.chainId, received: "7.00", left: "7.00" },
    ]);
    const before = await app.db.prisma.refund.count({ where: { chargeId: id } });
    const unnamed = await refund(id, { address: BUYER });
    expectError(unnamed, 400, "parameter_invalid", "chainId");
    expect(unnamed.body.message).toContain("Local devnet (31337) 3.00 USDC left, Base Sepolia (84532) 7.00 USDC left");
    expectError(await refund(id, { chainId: chainB.chainId, amount: "7.01", address: BUYER }), 400, "refund_exceeds_refundable", "amount");
    expectError(await refund(id, { chainId: chainA.chainId, amount: "3.01", address: BUYER }), 400, "refund_exceeds_refundable", "amount");
    expectError(await refund(id, { chainId: 11155111, address: BUYER }), 400, "parameter_invalid", "chainId");
    const gql = await app.gql('mutation($id: ID!) { createRefund(chargeId: $id, input: { amount: "1" }) { id } }', { id });
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "parameter_invalid", param: "chainId" });
    expect(await app.db.prisma.refund.count({ where: { chargeId: id } })).toBe(before);

    const onB = await refund(id, { chainId: chainB.chainId, address: BUYER });
    expect(onB.body).toMatchObject({ chainId: chainB.chainId, amount: "7.00" });
    const spent = await refund(id, { chainId: chainB.chainId, address: BUYER });
    expectError(spent, 409, "charge_not_refundable", "chainId");
    expect(spent.body.message).toContain("nothing left to refund on Base Sepolia (84532): Local devnet (31337) 3.00 USDC left");
    // Only A has money left now: no chainId needed.
    const onA = await refund(id, { address: BUYER });
    expect(onA.body).toMatchObject({ chainId: chainA.chainId, amount: "3.00" });
    expectError(await refund(id, { address: BUYER }), 409, "charge_not_refundable", "id");
    // Each completes on its own chain.
    await a.pay(a.wallet(1), BUYER, usdc("3"));
    await b.pay(b.wallet(1), BUYER, usdc("7"));
    await completed(onA.body.id);
    await completed(onB.body.id);
    expect((await getCharge(id)).amountRefunded).toBe("10.00");
  });
});
