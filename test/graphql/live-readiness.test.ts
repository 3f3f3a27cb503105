// Going live over GraphQL: a live charge, invoice (made or finalized) or payment link (made or
// reactivated) without a live settlement wallet is settlement_wallet_missing naming liveWallet, and
// nothing is made (test mode as before); `liveReadiness` lists the checklist (live wallet, a mainnet
// with a funded relayer, an enabled live webhook endpoint), each item flipping as it is fixed or
// undone, for a dashboard session and for API keys of either mode.
import { randomBytes } from "node:crypto";
import { parseEther } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, enableChain } from "../../src/chain/chains.js";
import { factoryV2Address } from "../../src/chain/clones.js";
import { recordRelayerBalance } from "../../src/domain/chain-status.js";
import { liveReadiness } from "../../src/domain/live-readiness.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const FEE_RECIPIENT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const RELAYER = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
/** Base as a live chain of this service: nothing here calls its RPC URL. */
const BASE = enableChain({
  chainId: 8453,
  rpcUrls: ["http://127.0.0.1:9"],
  factory: factoryV2Address(FEE_RECIPIENT),
  feeRecipient: FEE_RECIPIENT,
  maxFeePerGas: parseEther("0.0000001"),
  stuckAfterSeconds: 900,
  watchTokens: [],
  confirmations: 20,
  relayerKey: "",
  relayerMinBalance: parseEther("0.005"),
});
const PASSWORD = "a long enough password";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING, { chains: new ChainSet([BASE]) });
}, 60_000);
afterAll(() => app?.stop());

type Shop = Awaited<ReturnType<TestApp["newMerchant"]>>;
/** A merchant with both wallets, less the ones named. */
async function shopWithout(...wallets: ("testWallet" | "liveWallet")[]): Promise<Shop> {
  const shop = await app.newMerchant();
  await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: Object.fromEntries(wallets.map((w) => [w, null])) });
  return shop;
}
const setLiveWallet = (shop: Shop, liveWallet: string | null) => app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet } });

async function customerOf(key: string): Promise<string> {
  const res = await app.gql(
    `mutation($i: CreateCustomerInput!) { createCustomer(input: $i) { id } }`,
    { i: { email: `c-${randomBytes(4).toString("hex")}@example.com`, name: "C" } },
    key,
  );
  return res.data.createCustomer.id;
}
const invoiceInput = (customerId: string) => ({ customerId, lineItems: [{ description: "Consulting", quantity: 2, unitAmount: "50.00" }] });

const CREATE_CHARGE = `mutation($i: CreateChargeInput!) { createCharge(input: $i) { id } }`;
const CREATE_INVOICE = `mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id status } }`;
const FINALIZE_INVOICE = `mutation($id: ID!) { finalizeInvoice(id: $id) { id status number } }`;
const CREATE_LINK = `mutation($i: CreatePaymentLinkInput!) { createPaymentLink(input: $i) { id active } }`;
const UPDATE_LINK = `mutation($id: ID!, $i: UpdatePaymentLinkInput!) { updatePaymentLink(id: $id, input: $i) { id active } }`;

/** The one error of a refused operation, which answered no data. */
function refusal(res: { data: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] }) {
  expect(res.errors, JSON.stringify(res)).toHaveLength(1);
  expect(res.data).toBeNull();
  return res.errors![0]!;
}

function expectWalletMissing(res: Parameters<typeof refusal>[0]) {
  const error = refusal(res);
  expect(error.extensions).toMatchObject({ code: "settlement_wallet_missing", param: "liveWallet" });
  // Written for the merchant: where to fix it, never a command or another merchant's id.
  expect(error.message).toContain("live settlement wallet in the dashboard's Settings");
  expect(error.message).not.toMatch(/npx|stablegate |--live-wallet|mer_/);
}

describe("live creation without a live settlement wallet", () => {
  it("refuses a live charge, invoice and payment link, making nothing; test mode makes them as before", async () => {
    const shop = await shopWithout("liveWallet", "testWallet");
    const live = shop.apiKeys.live.secret;
    const test = shop.apiKeys.test.secret;
    const customer = await customerOf(live);
    const merchantId = shop.merchant.id;

    expectWalletMissing(await app.gql(CREATE_CHARGE, { i: { orderId: "gl-1", amount: "10" } }, live));
    expectWalletMissing(await app.gql(CREATE_INVOICE, { i: invoiceInput(customer) }, live));
    expectWalletMissing(await app.gql(CREATE_LINK, { i: { name: "Tickets", amount: "25" } }, live));
    const prisma = app.db.prisma;
    expect(await prisma.charge.count({ where: { merchantId } })).toBe(0);
    expect(await prisma.invoice.count({ where: { merchantId } })).toBe(0);
    expect(await prisma.paymentLink.count({ where: { merchantId } })).toBe(0);

    // Test mode: links and invoices are made without a wallet (their Pay is refused at the charge).
    const testCustomer = await customerOf(test);
    expect((await app.gql(CREATE_LINK, { i: { name: "Test tickets", amount: "25" } }, test)).data.createPaymentLink.active).toBe(true);
    const draft = (await app.gql(CREATE_INVOICE, { i: invoiceInput(testCustomer) }, test)).data.createInvoice;
    expect((await app.gql(FINALIZE_INVOICE, { id: draft.id }, test)).data.finalizeInvoice.status).toBe("OPEN");
    const testCharge = refusal(await app.gql(CREATE_CHARGE, { i: { orderId: "gl-2", amount: "10" } }, test));
    expect(testCharge.extensions).toMatchObject({ code: "settlement_wallet_missing", param: "testWallet" });
  });

  it("refuses to finalize a live draft or reactivate a live link once the wallet is gone; with it again, both work", async () => {
    const shop = await shopWithout();
    const live = shop.apiKeys.live.secret;
    const draft = (await app.gql(CREATE_INVOICE, { i: invoiceInput(await customerOf(live)) }, live)).data.createInvoice;
    const link = (await app.gql(CREATE_LINK, { i: { name: "Tickets", amount: "25" } }, live)).data.createPaymentLink;
    expect((await app.gql(UPDATE_LINK, { id: link.id, i: { active: false } }, live)).data.updatePaymentLink.active).toBe(false);

    await setLiveWallet(shop, null);
    expectWalletMissing(await app.gql(FINALIZE_INVOICE, { id: draft.id }, live));
    expectWalletMissing(await app.gql(UPDATE_LINK, { id: link.id, i: { active: true } }, live));
    const prisma = app.db.prisma;
    expect(await prisma.invoice.findUniqueOrThrow({ where: { id: draft.id } })).toMatchObject({ status: "DRAFT", number: null });
    expect((await prisma.paymentLink.findUniqueOrThrow({ where: { id: link.id } })).active).toBe(false);
    // Retiring and renaming stay possible without a wallet.
    expect((await app.gql(UPDATE_LINK, { id: link.id, i: { name: "Old tickets" } }, live)).errors).toBeUndefined();

    await setLiveWallet(shop, WALLET);
    expect((await app.gql(FINALIZE_INVOICE, { id: draft.id }, live)).data.finalizeInvoice).toMatchObject({ status: "OPEN", number: "INV-000001" });
    expect((await app.gql(UPDATE_LINK, { id: link.id, i: { active: true } }, live)).data.updatePaymentLink.active).toBe(true);
  });
});

const READINESS = `{ liveReadiness { ready items { key done detail } } }`;
type Item = { key: string; done: boolean; detail: string };

describe("liveReadiness", () => {
  it("lists the three checks, each flipping as it is fixed or undone; any key or session of the merchant reads it", async () => {
    const shop = await shopWithout("liveWallet");
    const merchantId = shop.merchant.id;
    const user = await createUser(app.db.prisma, merchantId, { email: `live-${randomBytes(4).toString("hex")}@example.com`, password: PASSWORD }, OPERATOR);
    const signIn = await app.call("POST", "/dashboard/session", { key: null, body: { email: user.email, password: PASSWORD, mode: "live" } });
    expect(signIn.status, signIn.text).toBe(201);
    const session = { cookie: signIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signIn.body.csrfToken };

    const read = async (): Promise<{ ready: boolean; items: Item[] }> => {
      const viaSession = (await app.call("POST", "/graphql", { key: null, body: { query: READINESS }, headers: session })).body;
      expect(viaSession.errors).toBeUndefined();
      // The same for the merchant's keys of either mode.
      for (const key of [shop.apiKeys.test.secret, shop.apiKeys.live.secret]) expect((await app.gql(READINESS, {}, key)).data).toEqual(viaSession.data);
      return viaSession.data.liveReadiness;
    };
    const item = (r: { items: Item[] }, key: string) => r.items.find((i) => i.key === key)!;

    let r = await read();
    expect(r.items.map((i) => i.key)).toEqual(["LIVE_WALLET", "LIVE_CHAIN", "LIVE_WEBHOOK_ENDPOINT"]);
    expect(r.ready).toBe(false);
    expect(r.items.map((i) => i.done)).toEqual([false, false, false]);
    expect(item(r, "LIVE_WALLET").detail).toMatch(/Set a live settlement wallet in Settings/);
    expect(item(r, "LIVE_CHAIN").detail).toMatch(/^Base: the relayer's gas balance has not been checked yet/);
    expect(item(r, "LIVE_WEBHOOK_ENDPOINT").detail).toMatch(/Add a live webhook endpoint in Developers/);

    await setLiveWallet(shop, WALLET);
    r = await read();
    expect(item(r, "LIVE_WALLET")).toEqual({ key: "LIVE_WALLET", done: true, detail: `Live payments go to ${WALLET}.` });

    // The relayer as the worker last saw it: below its minimum, then funded.
    const balance = (eth: string) =>
      recordRelayerBalance(app.db.prisma, {
        chainId: 8453,
        relayerAddress: RELAYER,
        balance: parseEther(eth),
        minBalance: parseEther("0.005"),
        checkedAt: new Date(),
      });
    await balance("0.001");
    r = await read();
    expect(item(r, "LIVE_CHAIN")).toMatchObject({
      done: false,
      detail: `Base: the relayer ${RELAYER} has 0.001 ETH, below the 0.005 ETH it needs; the operator funds it.`,
    });
    await balance("0.2");
    r = await read();
    expect(item(r, "LIVE_CHAIN")).toMatchObject({ done: true, detail: "Base: ready (relayer funded with 0.2 ETH)." });

    // A test endpoint does not count; a live one does while it is enabled.
    const endpoint = (livemode: boolean) =>
      app.db.prisma.webhookEndpoint.create({
        data: { id: `whep_${randomBytes(12).toString("hex")}`, merchantId, livemode, url: "https://hooks.shop.example/stablegate", secret: "whsec_x" },
      });
    await endpoint(false);
    expect(item(await read(), "LIVE_WEBHOOK_ENDPOINT").done).toBe(false);
    const hook = await endpoint(true);
    r = await read();
    expect(item(r, "LIVE_WEBHOOK_ENDPOINT")).toMatchObject({ done: true, detail: "1 enabled live webhook endpoint." });
    expect(r.ready).toBe(true);

    await app.db.prisma.webhookEndpoint.update({ where: { id: hook.id }, data: { disabledAt: new Date() } });
    r = await read();
    expect(r.ready).toBe(false);
    expect(item(r, "LIVE_WEBHOOK_ENDPOINT")).toMatchObject({ done: false, detail: expect.stringMatching(/^Every live webhook endpoint is disabled/) });
    await setLiveWallet(shop, null);
    expect(item(await read(), "LIVE_WALLET").done).toBe(false);
  });

  it("without a mainnet on this service, says the operator enables one", async () => {
    const r = await liveReadiness(app.db.prisma, [], app.merchant.merchant.id);
    expect(r.items[1]).toEqual({ key: "live_chain", done: false, detail: expect.stringMatching(/^This service runs no mainnet yet/) });
    expect(r.ready).toBe(false);
  });

  it("needs a key or a session", async () => {
    const res = await app.gql(READINESS, {}, null);
    expect(res.errors?.[0].extensions.code).toBe("api_key_missing");
  });
});
