// Going live over REST: without a live settlement wallet, a live charge, invoice (made or finalized)
// and payment link (made or reactivated) are 400 settlement_wallet_missing naming liveWallet, telling
// the merchant where to set it, and nothing is made; test mode is as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp(POLLING);
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
