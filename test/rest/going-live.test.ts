// Going live over REST: without a live settlement wallet, a live charge, invoice (made or finalized)
// and payment link (made or reactivated) are 400 settlement_wallet_missing naming liveWallet, telling
// the merchant where to set it, and nothing is made; test mode is as before. Without an enabled live
// chain they are 400 chain_unsupported naming the setting (REST and GraphQL), also when a live invoice
// is finalized, sent or paid, or a live link reactivated or opened after the live chain went away.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finalizeInvoice, sendInvoice } from "../../src/domain/invoice-emails.js";
import { payInvoice } from "../../src/domain/invoices.js";
import { chargeFromPaymentLink, updatePaymentLink } from "../../src/domain/payment-links.js";
import { expectError, liveChains, POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
}, 60_000);
afterAll(() => app?.stop());

/** A merchant whose live wallet is not set. */
async function shopWithoutLiveWallet() {
  const shop = await app.newMerchant();
  await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: null } });
  return shop;
}

function expectWalletMissing(res: Awaited<ReturnType<TestApp["call"]>>) {
  expectError(res, 400, "settlement_wallet_missing", "liveWallet");
  expect(res.body.message).toBe(
    "No live-mode settlement wallet is set, so a buyer's payment would have nowhere to go. Set a live settlement wallet in the dashboard's Settings first.",
  );
}

describe("live creation without a live settlement wallet", () => {
  it("refuses a live charge, invoice and payment link; test mode makes them", async () => {
    const shop = await shopWithoutLiveWallet();
    const live = shop.apiKeys.live.secret;
    const customer = (await app.call("POST", "/v1/customers", { key: live, body: { email: "live@example.com", name: "Live" } })).body;
    const lineItems = [{ description: "Consulting", quantity: 1, unitAmount: "100" }];

    expectWalletMissing(await app.call("POST", "/v1/charges", { key: live, body: { orderId: "live-1", amount: "10" } }));
    expectWalletMissing(await app.call("POST", "/v1/invoices", { key: live, body: { customerId: customer.id, lineItems } }));
    expectWalletMissing(await app.call("POST", "/v1/payment_links", { key: live, body: { name: "Tickets", amount: "25" } }));
    const merchantId = shop.merchant.id;
    const prisma = app.db.prisma;
    expect([
      await prisma.charge.count({ where: { merchantId } }),
      await prisma.invoice.count({ where: { merchantId } }),
      await prisma.paymentLink.count({ where: { merchantId } }),
    ]).toEqual([0, 0, 0]);

    const test = shop.apiKeys.test.secret;
    expect((await app.call("POST", "/v1/charges", { key: test, body: { orderId: "test-1", amount: "10" } })).status).toBe(201);
    expect((await app.call("POST", "/v1/payment_links", { key: test, body: { name: "Tickets", amount: "25" } })).status).toBe(201);
  });

  it("refuses to finalize a live draft or reactivate a live link after the wallet was cleared", async () => {
    const shop = await app.newMerchant();
    const live = shop.apiKeys.live.secret;
    const customer = (await app.call("POST", "/v1/customers", { key: live, body: { email: "later@example.com", name: "Later" } })).body;
    const draft = (
      await app.call("POST", "/v1/invoices", { key: live, body: { customerId: customer.id, lineItems: [{ description: "A", quantity: 1, unitAmount: "5" }] } })
    ).body;
    const link = (await app.call("POST", "/v1/payment_links", { key: live, body: { name: "Tickets", amount: "25" } })).body;
    expect((await app.call("PATCH", `/v1/payment_links/${link.id}`, { key: live, body: { active: false } })).body.active).toBe(false);

    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: null } });
    expectWalletMissing(await app.call("POST", `/v1/invoices/${draft.id}/finalize`, { key: live }));
    expectWalletMissing(await app.call("PATCH", `/v1/payment_links/${link.id}`, { key: live, body: { active: true } }));
    expect((await app.call("GET", `/v1/invoices/${draft.id}`, { key: live })).body.status).toBe("DRAFT");

    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: WALLET } });
    expect((await app.call("POST", `/v1/invoices/${draft.id}/finalize`, { key: live })).body.status).toBe("OPEN");
    expect((await app.call("PATCH", `/v1/payment_links/${link.id}`, { key: live, body: { active: true } })).body.active).toBe(true);
  });

  it("documents the refusal on each route that can answer it", async () => {
    const doc = (await app.call("GET", "/v1/openapi.json", { key: null })).body;
    const codesOf = (path: string, method: string): string[] =>
      JSON.stringify(doc.paths[path][method].responses["400"]).match(/settlement_wallet_missing/g) ?? [];
    for (const [path, method] of [
      ["/v1/charges", "post"],
      ["/v1/invoices", "post"],
      ["/v1/invoices/{id}/finalize", "post"],
      ["/v1/payment_links", "post"],
      ["/v1/payment_links/{id}", "patch"],
    ] as const) {
      expect(codesOf(path, method).length, `${method} ${path}`).toBeGreaterThan(0);
    }
  });
});

describe("live creation without a live chain", () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await startApp(POLLING);
  }, 60_000);
  afterAll(() => bare?.stop());

  function expectNoLiveChain(res: { status: number; body: any; headers: Headers }) {
    expectError(res, 400, "chain_unsupported", null);
    expect(res.body.message).toContain("CHAIN_<id>_RPC_URL and CHAIN_<id>_FACTORY");
  }

  it("refuses a live charge, invoice and payment link over REST and GraphQL, making nothing; test mode makes them", async () => {
    const live = bare.liveKey;
    const customer = (await bare.call("POST", "/v1/customers", { key: live, body: { email: "nochain@example.com", name: "No chain" } })).body;
    const lineItems = [{ description: "Consulting", quantity: 1, unitAmount: "100" }];
    expectNoLiveChain(await bare.call("POST", "/v1/charges", { key: live, body: { orderId: "nochain-1", amount: "10" } }));
    expectNoLiveChain(await bare.call("POST", "/v1/invoices", { key: live, body: { customerId: customer.id, lineItems } }));
    expectNoLiveChain(await bare.call("POST", "/v1/payment_links", { key: live, body: { name: "Tickets", amount: "25" } }));
    const gql = (query: string, variables: object) => bare.call("POST", "/graphql", { key: live, body: { query, variables } }).then((r) => r.body);
    const charged = await gql(`mutation($i: CreateChargeInput!) { createCharge(input: $i) { id } }`, { i: { orderId: "nochain-2", amount: "10" } });
    expect(charged.errors[0]).toMatchObject({ extensions: { code: "chain_unsupported" } });
    expect(charged.errors[0].message).toContain("CHAIN_<id>_FACTORY");
    const linked = await gql(`mutation($i: CreatePaymentLinkInput!) { createPaymentLink(input: $i) { id } }`, { i: { name: "Tickets", amount: "25" } });
    expect(linked.errors[0]).toMatchObject({ extensions: { code: "chain_unsupported" } });
    const merchantId = bare.merchant.merchant.id;
    const prisma = bare.db.prisma;
    const made = { merchantId, livemode: true };
    expect([await prisma.charge.count({ where: made }), await prisma.invoice.count({ where: made }), await prisma.paymentLink.count({ where: made })]).toEqual([
      0, 0, 0,
    ]);
    expect((await bare.call("POST", "/v1/charges", { body: { orderId: "nochain-test", amount: "10" } })).status).toBe(201);
    expect((await bare.call("POST", "/v1/payment_links", { body: { name: "Tickets", amount: "25" } })).status).toBe(201);
  });

  it("refuses to finalize or send a live invoice, reactivate a live link or open a charge from it once no live chain runs", async () => {
    // Made while a live chain ran (app), then used by a service that runs none (settings without it).
    const live = app.liveKey;
    const scope = { merchantId: app.merchant.merchant.id, livemode: true };
    const none = { ...app.settings, chains: [] };
    const customer = (await app.call("POST", "/v1/customers", { key: live, body: { email: "gone@example.com", name: "Gone" } })).body;
    const lineItems = [{ description: "A", quantity: 1, unitAmount: "5" }];
    const draft = (await app.call("POST", "/v1/invoices", { key: live, body: { customerId: customer.id, lineItems } })).body;
    const open = (await app.call("POST", "/v1/invoices", { key: live, body: { customerId: customer.id, lineItems } })).body;
    expect((await app.call("POST", `/v1/invoices/${open.id}/finalize`, { key: live })).body.status).toBe("OPEN");
    const link = (await app.call("POST", "/v1/payment_links", { key: live, body: { name: "Tickets", amount: "25" } })).body;
    const retired = (await app.call("POST", "/v1/payment_links", { key: live, body: { name: "Old", amount: "25" } })).body;
    expect((await app.call("PATCH", `/v1/payment_links/${retired.id}`, { key: live, body: { active: false } })).body.active).toBe(false);

    const refused = async (work: Promise<unknown>) => {
      const e = await work.then(
        () => null,
        (x: unknown) => x,
      );
      expect(e).toMatchObject({ code: "chain_unsupported" });
    };
    await refused(finalizeInvoice(app.db.prisma, scope, draft.id, none));
    await refused(sendInvoice(app.db.prisma, scope, open.id, none));
    await refused(payInvoice(app.db.prisma, open.id, none));
    await refused(updatePaymentLink(app.db.prisma, scope, retired.id, { active: true }, none));
    await refused(chargeFromPaymentLink(app.db.prisma, link.id, {}, none));
    expect((await app.call("GET", `/v1/invoices/${draft.id}`, { key: live })).body.status).toBe("DRAFT");
    expect((await app.call("GET", `/v1/payment_links/${retired.id}`, { key: live })).body.active).toBe(false);
    expect(await app.db.prisma.charge.count({ where: { OR: [{ invoiceId: open.id }, { paymentLinkId: link.id }] } })).toBe(0);
  });
});
