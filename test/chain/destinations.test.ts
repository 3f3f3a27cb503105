// Money only goes where it can arrive (.docs/refunds.md "Addresses refused"), on a real anvil with
// Circle's USDC: a refund address (the merchant's, over REST and GraphQL, and the buyer's on the claim
// page) and a settlement wallet (GraphQL settings, the CLI's domain call) are refused with 400
// parameter_invalid naming the field and saying why, when they are a charge's deposit address (this
// charge's or another's), a factory (version 2 and version 1), a USDC token contract (the chain's or
// another chain's of the registry), the zero address or, for a refund, the charge's settlement wallet.
// A refused request changes nothing.
import { randomBytes } from "node:crypto";
import { parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { knownChain } from "../../src/chain/registry.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createSchema, updateSchema } from "../../src/domain/merchant-requests.js";
import { createMerchant, updateMerchant } from "../../src/domain/merchants.js";
import { parseInput } from "../../src/domain/validation.js";
import { createUser } from "../../src/domain/users.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { expectError, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";

const usdc = (s: string) => parseUnits(s, 6);
const BUYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const ZERO = "0x0000000000000000000000000000000000000000";
const BASE_USDC = knownChain(8453)!.usdc!;
const PASSWORD = "correct horse battery";

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic;
let v1Factory: string;

beforeAll(async () => {
  chain = await startTestChain();
  v1Factory = (await chain.deployV1()).target as string;
  devnet = await chain.enabled(1, undefined, { factoryV1: v1Factory });
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

const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

let seq = 0;
const newCharge = async () => (await app.call("POST", "/v1/charges", { body: { orderId: `dest-${++seq}`, amount: "5" } })).body;
const depositAddress = async (id: string) => (await app.db.prisma.charge.findUniqueOrThrow({ where: { id } })).depositAddress!;
/** A charge paid 5 USDC on the devnet, confirmed; with its deposit address. */
async function paidCharge(): Promise<{ id: string; address: string }> {
  const charge = await newCharge();
  const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
  await chain.pay(chain.wallet(3), picked.body.cloneAddress, usdc("5"));
  await waitFor("the payment's confirmation", async () => (await app.call("GET", `/v1/charges/${charge.id}`)).body.amountReceived === "5.00");
  return { id: charge.id, address: picked.body.cloneAddress };
}

/** What a refused request must leave as it was: refunds, events, the merchants' wallets. */
const state = async () => ({
  refunds: await app.db.prisma.refund.findMany({ orderBy: { id: "asc" } }),
  events: await app.db.prisma.event.count(),
  wallets: await app.db.prisma.merchant.findMany({ select: { id: true, testWallet: true, liveWallet: true }, orderBy: { id: "asc" } }),
});

/** Every address no refund of `charge` may go to, with the words its refusal must say. */
async function refusedFor(charge: { address: string }): Promise<[string, string, RegExp][]> {
  const other = await newCharge();
  return [
    ["this charge's deposit address", charge.address, /address this charge was paid to/],
    ["another charge's deposit address", await depositAddress(other.id), /deposit address of a charge/],
    ["the factory", devnet.factory, /charge factory \(ChargeFactoryV2\) on Local devnet/],
    ["the version 1 factory", v1Factory, /version 1 charge factory/],
    ["the chain's USDC", devnet.usdc, /USDC token contract on Local devnet/],
    ["another chain's USDC", BASE_USDC, /USDC token contract on Base/],
    ["the zero address", ZERO, /zero address/],
    ["the charge's settlement wallet", WALLET, /settlement wallet that pays this refund/],
  ];
}

describe("refund addresses", () => {
  it("REST and GraphQL refuse each address money cannot reach the buyer at, saying why, and change nothing", async () => {
    const charge = await paidCharge();
    const before = await state();
    for (const [what, address, why] of await refusedFor(charge)) {
      const rest = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { address } });
      expectError(rest, 400, "parameter_invalid", "address");
      expect(rest.body.message, what).toMatch(why);
      const gql = await app.gql("mutation($id: ID!, $a: String) { createRefund(chargeId: $id, input: { address: $a }) { id } }", { id: charge.id, a: address });
      expect(gql.errors?.[0]?.extensions, what).toMatchObject({ code: "parameter_invalid", param: "address" });
      expect(gql.errors![0]!.message, what).toMatch(why);
    }
    // The other charge made above is the only change.
    const after = await state();
    expect(after.refunds).toEqual(before.refunds);
    expect(after.wallets).toEqual(before.wallets);
    // The buyer's own wallet is taken.
    const made = await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { address: BUYER } });
    expect(made.status, made.text).toBe(201);
  });

  it("the claim page refuses them too, tells the buyer why, and the link keeps waiting for an address", async () => {
    const charge = await paidCharge();
    const made = (await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: {} })).body;
    expect(made.status).toBe("AWAITING_ADDRESS");
    const token = new URL(made.claimUrl).searchParams.get("token")!;
    const post = (address: string) =>
      fetch(`${app.url}/pay/refunds/${made.id}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, address, confirmAddress: address }).toString(),
      });
    const before = await state();
    for (const [what, address, why] of await refusedFor(charge)) {
      const res = await post(address);
      expect(res.status, what).toBe(400);
      const html = await res.text();
      expect(html, what).toContain('role="alert"');
      // The page escapes what it shows: compare against the unescaped text of the alert.
      const alert = /<p class="status error" role="alert">([^<]*)<\/p>/.exec(html)![1]!.replaceAll("&#39;", "'").replaceAll("&amp;", "&");
      expect(alert, what).toMatch(why);
      expect(html, what).toContain("<form");
    }
    expect((await state()).refunds).toEqual(before.refunds);
    expect((await app.call("GET", `/v1/refunds/${made.id}`)).body).toMatchObject({ status: "AWAITING_ADDRESS", address: null });
    const claimed = await post(BUYER);
    expect(claimed.status).toBe(200);
    expect((await app.call("GET", `/v1/refunds/${made.id}`)).body).toMatchObject({ status: "AWAITING_PAYMENT", address: BUYER });
  });
});

describe("settlement wallets", () => {
  /** Every wallet no payout may go to, with the words its refusal must say. */
  const refusedWallets = async (): Promise<[string, string, RegExp][]> => {
    const charge = await newCharge();
    return [
      ["a charge's deposit address", await depositAddress(charge.id), /deposit address of a charge/],
      ["the factory", devnet.factory, /charge factory/],
      ["the version 1 factory", v1Factory, /version 1 charge factory/],
      ["the chain's USDC", devnet.usdc, /USDC token contract on Local devnet/],
      ["another chain's USDC", BASE_USDC, /USDC token contract on Base/],
      ["the zero address", ZERO, /zero address/],
    ];
  };

  it("the dashboard's settings refuse each, before asking for the password, and change nothing", async () => {
    const user = await createUser(
      app.db.prisma,
      app.merchant.merchant.id,
      { email: `dest-${randomBytes(4).toString("hex")}@example.com`, password: PASSWORD },
      OPERATOR,
    );
    const signedIn = await app.call("POST", "/dashboard/session", { key: null, body: { email: user.email, password: PASSWORD } });
    expect(signedIn.status, signedIn.text).toBe(201);
    const headers = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signedIn.body.csrfToken };
    const gql = async (query: string, variables: Record<string, unknown>) =>
      (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers })).body;
    const wallets = await refusedWallets();
    const before = await state();
    for (const [what, address, why] of wallets) {
      for (const field of ["testWallet", "liveWallet"]) {
        const res = await gql(`mutation($w: String, $p: String) { updateMerchantSettings(input: { ${field}: $w, password: $p }) { testWallet } }`, {
          w: address,
          p: PASSWORD,
        });
        expect(res.errors?.[0]?.extensions, `${what} as ${field}`).toMatchObject({ code: "parameter_invalid", param: field });
        expect(res.errors![0]!.message, what).toMatch(why);
        // Without the password the answer is the same: the wallet is refused before anything is asked.
        const bare = await gql(`mutation($w: String) { updateMerchantSettings(input: { ${field}: $w }) { testWallet } }`, { w: address });
        expect(bare.errors?.[0]?.extensions, what).toMatchObject({ code: "parameter_invalid", param: field });
      }
    }
    expect((await state()).wallets).toEqual(before.wallets);
    const fine = await gql("mutation($w: String, $p: String) { updateMerchantSettings(input: { testWallet: $w, password: $p }) { testWallet } }", {
      w: WALLET,
      p: PASSWORD,
    });
    expect(fine.errors).toBeUndefined();
  });

  it("the CLI's merchant create and update refuse each and change nothing", async () => {
    const chains = new ChainSet([devnet]);
    const merchantId = app.merchant.merchant.id;
    const wallets = await refusedWallets();
    const before = await state();
    for (const [what, address, why] of wallets) {
      // As the CLI calls them: its flags parsed first (domain/merchant-requests.ts), then the domain.
      const update = async () => updateMerchant(app.db.prisma, merchantId, parseInput(updateSchema, { liveWallet: address }), chains, OPERATOR_ACTOR);
      await expect(update(), what).rejects.toMatchObject({
        code: "parameter_invalid",
        param: "liveWallet",
        message: expect.stringMatching(why),
      });
      const create = async () => createMerchant(app.db.prisma, parseInput(createSchema, { name: "Refused", testWallet: address }), { feeBps: 100, chains });
      await expect(create(), what).rejects.toMatchObject({
        code: "parameter_invalid",
        param: "testWallet",
        message: expect.stringMatching(why),
      });
    }
    const after = await state();
    expect(after.wallets).toEqual(before.wallets);
    expect(await app.db.prisma.apiKey.count({ where: { merchant: { name: "Refused" } } })).toBe(0);
  });
});
