// Payment without gas on a real anvil with Circle's USDC: a buyer holding USDC and no ETH signs a
// transferWithAuthorization to the charge's clone, the service relays it with its own gas, and the
// charge completes; every invalid authorization is refused with nothing sent; one transaction per
// authorization however often it is handed in; the per-chain daily gas budget.
import { Contract, hexlify, parseUnits, randomBytes, Wallet } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationReaders } from "../../src/chain/authorizations.js";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { authorizationSchema } from "../../src/domain/authorizations.js";
import { gaslessGasToday, submitChargeAuthorization } from "../../src/domain/charge-authorizations.js";
import { parseInput } from "../../src/domain/validation.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/lib/eip3009.js";

const usdc = (s: string) => parseUnits(s, 6);

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic;
let domain: { name: string; version: string; chainId: number; verifyingContract: string };
const producer = blockProducer(() => chain.mine());

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  producer.start();
  const token = new Contract(devnet.usdc, ["function name() view returns (string)", "function version() view returns (string)"], chain.provider);
  domain = { name: await token.getFunction("name")(), version: await token.getFunction("version")(), chainId: devnet.chainId, verifyingContract: devnet.usdc };
}, 60_000);
afterAll(async () => {
  producer.stop();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
/** A PENDING charge on the devnet, its clone chosen. */
async function charge(amount = "5"): Promise<{ id: string; clone: string }> {
  const made = (await app.call("POST", "/v1/charges", { body: { orderId: `gasless-${++seq}`, amount } })).body;
  const picked = await app.call("POST", `/v1/public/charges/${made.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  return { id: made.id, clone: picked.body.cloneAddress };
}
/** A buyer with USDC and no ETH at all. */
async function buyer(holds = "20"): Promise<Wallet> {
  const wallet = Wallet.createRandom().connect(chain.provider) as unknown as Wallet;
  await chain.mint(wallet.address, usdc(holds));
  return wallet;
}
type Over = Partial<{ to: string; value: bigint; validAfter: number; validBefore: number; nonce: string; domain: typeof domain; from: string }>;
/** The body the page would post: `signer` signs a transfer of `value` to `to`. */
async function sign(signer: Wallet, to: string, value: bigint, over: Over = {}) {
  const message = {
    from: over.from ?? signer.address,
    to: over.to ?? to,
    value: over.value ?? value,
    validAfter: over.validAfter ?? 0,
    validBefore: over.validBefore ?? Math.floor(Date.now() / 1000) + 3600,
    nonce: over.nonce ?? hexlify(randomBytes(32)),
  };
  const signature = await signer.signTypedData(over.domain ?? domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message);
  return {
    from: message.from,
    value: String(message.value),
    validAfter: String(message.validAfter),
    validBefore: String(message.validBefore),
    nonce: message.nonce,
    signature,
  };
}
const submit = (chargeId: string, body: object) => app.call("POST", `/v1/public/charges/${chargeId}/authorizations`, { key: null, body });
const relayed = () => app.db.prisma.relayerTransaction.count({ where: { kind: "AUTHORIZATION" } });
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;
const GASLESS = { gasless: { minAmount: usdc("1") } };

describe("payment without gas", () => {
  it("pays a charge to COMPLETED from a buyer who holds no ETH; the relayer paid the gas", async () => {
    const c = await charge("5");
    const payer = await buyer("20");
    expect(await chain.provider.getBalance(payer.address)).toBe(0n);
    const offered = await (await fetch(`${app.url}/pay/${c.id}`)).text();
    expect(offered).toContain(`"gasless":{"domain":{"name":"${domain.name}","version":"${domain.version}","chainId":${devnet.chainId}`);
    expect(offered).toContain('"maxValue":"5000000"');
    const res = await submit(c.id, await sign(payer, c.clone, usdc("5")));
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ object: "charge_authorization", chargeId: c.id, value: "5.00", error: null });
    expect(res.body.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    await waitFor("the charge to complete", async () => (await getCharge(c.id)).status === "COMPLETED");
    expect(await chain.provider.getBalance(payer.address)).toBe(0n);
    expect(await chain.usdc.getFunction("balanceOf")(payer.address)).toBe(usdc("15"));
    const stored = await waitFor(
      "the gas used",
      async () => (await app.db.prisma.authorization.findFirst({ where: { chargeId: c.id, status: "MINED" } })) ?? undefined,
    );
    expect(stored.gasUsed).toBeGreaterThan(30_000n);
    expect(stored.gasUsed).toBeLessThan(200_000n);
    const page = await (await fetch(`${app.url}/pay/${c.id}`)).text();
    expect(page).toContain('"gasless":null');
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toContain(`stablegate_gasless_gas_used{chain_id="${devnet.chainId}"} ${stored.gasUsed}`);
  });

  it("refuses every invalid authorization with its reason, and sends nothing", async () => {
    const c = await charge("5");
    const payer = await buyer("3");
    const rich = await buyer("50");
    const now = Math.floor(Date.now() / 1000);
    const before = { relayed: await relayed(), stored: await app.db.prisma.authorization.count() };
    const refused = async (body: object, reason: RegExp, param?: string, chargeId = c.id) => {
      const res = await submit(chargeId, body);
      expectError(res, 400, "authorization_invalid", param);
      expect(res.body.message).toMatch(reason);
    };
    await refused(await sign(rich, c.clone, usdc("5"), { to: chain.wallet(5).address }), /not the payer's/, "signature");
    await refused({ ...(await sign(rich, c.clone, usdc("5"))), from: payer.address }, /not the payer's/, "signature");
    await refused(await sign(rich, c.clone, usdc("6")), /at most what is still due/, "value");
    await refused(await sign(rich, c.clone, 0n), /more than 0/, "value");
    await refused(await sign(rich, c.clone, usdc("5"), { validBefore: now + 30 }), /at least 60 s/, "validBefore");
    await refused(await sign(rich, c.clone, usdc("5"), { validBefore: now - 10 }), /at least 60 s/, "validBefore");
    await refused(await sign(rich, c.clone, usdc("5"), { validAfter: now + 600 }), /not valid yet/, "validAfter");
    await refused(await sign(rich, c.clone, usdc("5"), { domain: { ...domain, chainId: 8453 } }), /not the payer's/, "signature");
    await refused(await sign(rich, c.clone, usdc("5"), { domain: { ...domain, name: "Fake Coin" } }), /not the payer's/, "signature");
    await refused(await sign(payer, c.clone, usdc("5")), /holds less USDC/, "value");
    // Less than GASLESS_MIN_AMOUNT (1.00) only as exactly what is due: dust would cost the relayer ~100k gas a time.
    await refused(await sign(rich, c.clone, 1n), /at least 1\.00 USDC, or exactly what is due \(5\.00 USDC\)/, "value");
    const small = await charge("0.50");
    await refused(await sign(rich, small.clone, usdc("0.2")), /at least 1\.00 USDC, or exactly what is due \(0\.50 USDC\)/, "value", small.id);
    expect({ relayed: await relayed(), stored: await app.db.prisma.authorization.count() }).toEqual(before);

    // A charge without a chain, or no longer pending, is not payable.
    const fresh = (await app.call("POST", "/v1/charges", { body: { orderId: `gasless-${++seq}`, amount: "5" } })).body;
    expectError(await submit(fresh.id, await sign(rich, c.clone, usdc("5"))), 409, "charge_not_payable");
    await app.call("DELETE", `/v1/charges/${small.id}`);
    expectError(await submit(small.id, await sign(rich, small.clone, usdc("0.5"))), 409, "charge_not_payable");
    expectError(await submit("chrg_nothere", await sign(rich, c.clone, usdc("5"))), 404, "resource_missing");

    // Exactly what is due, however little: relayed, and it completes the charge.
    const tiny = await charge("0.50");
    const exact = await submit(tiny.id, await sign(rich, tiny.clone, usdc("0.5")));
    expect(exact.status, exact.text).toBe(202);
    await waitFor("the small charge to complete", async () => (await getCharge(tiny.id)).status === "COMPLETED");
  });

  it("relays an authorization handed in twice at once as one transaction, refuses its replay, and holds one per charge", async () => {
    const c = await charge("5");
    const payer = await buyer("20");
    const body = await sign(payer, c.clone, usdc("2"));
    const before = await relayed();
    // The worker paused: both answers come back RELAYING, and the authorization stays on its way.
    await runner.stop();
    let pendingRefusal;
    try {
      const [a, b] = await Promise.all([submit(c.id, body), submit(c.id, body)]);
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(a.body.id).toBe(b.body.id);
      expect(a.body).toMatchObject({ status: "RELAYING", txHash: null });
      // While it is on its way, another authorization for the charge waits, and so does another from the same payer.
      pendingRefusal = await submit(c.id, await sign(payer, c.clone, usdc("1")));
      const elsewhere = await charge("5");
      const samePayer = await submit(elsewhere.id, await sign(payer, elsewhere.clone, usdc("5")));
      expectError(samePayer, 400, "authorization_invalid", "from");
      expect(samePayer.body.message).toMatch(/from this wallet is on its way/);
    } finally {
      runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
    }
    expectError(pendingRefusal, 409, "charge_not_payable");
    await waitFor("the partial payment", async () => (await getCharge(c.id)).amountReceived === "2.00");
    await waitFor("its transaction to end", async () => (await app.db.prisma.authorization.count({ where: { chargeId: c.id, status: "MINED" } })) === 1);
    expect(await relayed()).toBe(before + 1);
    // The same signed authorization again, once used: a replay.
    expectError(await submit(c.id, body), 400, "authorization_invalid", "nonce");
    const other = await charge("5");
    expectError(await submit(other.id, body), 400, "authorization_invalid", "nonce");
    // The rest, in a second authorization.
    expect((await submit(c.id, await sign(payer, c.clone, usdc("3")))).status).toBe(202);
    await waitFor("the charge to complete", async () => (await getCharge(c.id)).status === "COMPLETED");
  });

  it("stops at the chain's daily gas budget: the page offers it no more and a submission is refused", async () => {
    const spent = await gaslessGasToday(app.db.prisma, devnet.chainId);
    expect(spent).toBeGreaterThan(0n);
    const capped = new ChainSet([{ ...devnet, gaslessDailyGas: spent }]);
    const c = await charge("5");
    const payer = await buyer("20");
    const body = await sign(payer, c.clone, usdc("5"));
    const error = await submitChargeAuthorization(
      app.db.prisma,
      capped,
      authorizationReaders(capped),
      GASLESS,
      c.id,
      parseInput(authorizationSchema, body),
    ).catch((e: Error) => e);
    expect(error).toMatchObject({ code: "authorization_invalid", message: expect.stringMatching(/spent for today/) });
    // With room left, the same goes through.
    const roomy = new ChainSet([{ ...devnet, gaslessDailyGas: spent + 1_000_000n }]);
    const accepted = await submitChargeAuthorization(app.db.prisma, roomy, authorizationReaders(roomy), GASLESS, c.id, parseInput(authorizationSchema, body));
    expect(accepted.status).toBe("RELAYING");
    await waitFor("the charge to complete", async () => (await getCharge(c.id)).status === "COMPLETED");
  });
});
