// What a buyer can meet under the hosted pages when something is wrong: every error is the one styled
// page (src/pay/buyer-error.ts) in the seller's name, saying what the buyer can do, and never operator
// text, a stack or a JSON body; the operator reads the reason in the log at warn. A live payment link
// or invoice whose merchant has no live wallet shows "not available right now". And the refund claim
// link, once used, shows the refund's status (claimed, on its way, completed with its transaction,
// not sent yet, cancelled) instead of "not found".
import { randomBytes } from "node:crypto";
import { parseEther } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, enableChain } from "../../src/chain/chains.js";
import { factoryV2Address } from "../../src/chain/clones.js";
import { AppError, type ErrorCode } from "../../src/domain/errors.js";
import { STATUS_OF_CODE } from "../../src/http/errors.js";
import { type BuyerTopic, buyerErrorPage } from "../../src/pay/buyer-error.js";
import { POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";

const FEE_RECIPIENT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const BUYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const SELLER = "Rosa Roastery";
/** What a buyer must never read: the words of commands, settings and merchant ids. */
const OPERATOR_TEXT = ["npx", "stablegate ", "merchant update", "--live-wallet", "mer_"];

let app: TestApp;
const log = recordingLogger();
let shop: Awaited<ReturnType<TestApp["newMerchant"]>>;
beforeAll(async () => {
  // Base (live, with an explorer) as a chain of this service: nothing here calls its RPC URL.
  const base = enableChain({
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
  app = await startApp(POLLING, { chains: new ChainSet([base]), logger: log.logger });
  shop = await app.newMerchant();
  await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { name: SELLER } });
}, 60_000);
afterAll(() => app?.stop());

const page = (path: string, init?: RequestInit) => fetch(`${app.url}${path}`, { redirect: "manual", ...init });
const post = (path: string, fields: Record<string, string> = {}) =>
  page(path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
const live = () => shop.apiKeys.live.secret;
const test = () => shop.apiKeys.test.secret;

/** The buyer's error page: its status, the hosted pages' look, what it says, whose it is, and nothing an operator would read. */
async function expectBuyerPage(res: Response, status: number, says: RegExp, seller: string | null = SELLER): Promise<string> {
  const html = await res.text();
  expect(res.status, html.slice(0, 300)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  expect(html).toMatch(/^<!doctype html>/);
  expect(html).toContain('<link rel="stylesheet" href="/pay/assets/pay.css">');
  expect(html).toMatch(says);
  if (seller) expect(html).toContain(`<p class="merchant">${seller}</p>`);
  for (const text of OPERATOR_TEXT) expect(html.toLowerCase()).not.toContain(text);
  expect(html).not.toMatch(/"(statusCode|code|requestId)"\s*:/);
  expect(html).not.toMatch(/\bat \S+ \(.*:\d+:\d+\)/);
  return html;
}

describe("the buyer's error pages", () => {
  it("a live payment link whose merchant has no live wallet is 'not available right now', in the seller's name; the operator is told why at warn", async () => {
    const link = (await app.call("POST", "/v1/payment_links", { key: live(), body: { name: "Beans", amount: "24" } })).body;
    expect((await page(`/pay/l/${link.id}`)).status).toBe(200);
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: null } });
    try {
      const shown = await expectBuyerPage(await page(`/pay/l/${link.id}`), 503, /<h1>This payment link is not available right now<\/h1>/);
      expect(shown).toContain(`Contact ${SELLER} to pay another way, or try again later.`);
      expect(shown).not.toContain("<form");
      // Pressing Pay on a page opened before: the same page, and no charge.
      await expectBuyerPage(await post(`/pay/l/${link.id}`), 503, /This payment link is not available right now/);
      expect(await app.db.prisma.charge.count({ where: { paymentLinkId: link.id } })).toBe(0);
      const told = log.lines().filter((l) => l.code === "settlement_wallet_missing");
      expect(told.length).toBeGreaterThanOrEqual(2);
      expect(told[0]).toMatchObject({ level: 40, msg: "hosted page refused a buyer", param: "liveWallet" });
      expect(told[0]!.reason).toMatch(/No live-mode settlement wallet is set/);
    } finally {
      await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: WALLET } });
    }
  });

  it("a live invoice whose merchant has no live wallet shows, but its Pay is 'not available right now'", async () => {
    const customer = (await app.call("POST", "/v1/customers", { key: live(), body: { email: `b-${randomBytes(3).toString("hex")}@example.com`, name: "B" } }))
      .body;
    const draft = (
      await app.call("POST", "/v1/invoices", {
        key: live(),
        body: { customerId: customer.id, lineItems: [{ description: "Beans", quantity: 1, unitAmount: "9" }] },
      })
    ).body;
    const invoice = (await app.call("POST", `/v1/invoices/${draft.id}/finalize`, { key: live() })).body;
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: null } });
    try {
      expect((await page(`/pay/invoices/${invoice.id}`)).status).toBe(200);
      await expectBuyerPage(await post(`/pay/invoices/${invoice.id}/pay`), 503, /<h1>This invoice is not available right now<\/h1>/);
      expect(await app.db.prisma.charge.count({ where: { invoiceId: invoice.id } })).toBe(0);
    } finally {
      await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: WALLET } });
    }
  });

  it("unknown links, of every kind, are 'not found' pages", async () => {
    const notFound: [string, RegExp][] = [
      [`/pay/chrg_${"0".repeat(24)}`, /<h1>Payment not found<\/h1>/],
      ["/pay/nope", /<h1>Payment not found<\/h1>/],
      [`/pay/l/plink_${"x".repeat(24)}`, /<h1>Payment link not found<\/h1>/],
      [`/pay/invoices/inv_${"x".repeat(24)}`, /<h1>Invoice not found<\/h1>/],
      [`/pay/invoices/inv_${"x".repeat(24)}/pdf`, /<h1>Invoice not found<\/h1>/],
      [`/pay/refunds/ref_${"x".repeat(24)}?token=${"t".repeat(32)}`, /<h1>Refund not found<\/h1>/],
      ["/pay/some/cut/off/link", /<h1>Payment not found<\/h1>/],
    ];
    for (const [path, says] of notFound) {
      const html = await expectBuyerPage(await page(path), 404, says, null);
      expect(html, path).toContain("Check the link you were given, or ask the shop for a new one.");
    }
  });

  it("a retired link, a refused step, a bad request and too many attempts: each says what the buyer can do", async () => {
    const link = (await app.call("POST", "/v1/payment_links", { key: test(), body: { name: "Mugs", amount: "5" } })).body;
    await app.call("PATCH", `/v1/payment_links/${link.id}`, { key: test(), body: { active: false } });
    await expectBuyerPage(await page(`/pay/l/${link.id}`), 410, /<h1>This payment link no longer takes payments<\/h1>[\s\S]*Ask Rosa Roastery for a new link/);
    await expectBuyerPage(await post(`/pay/l/${link.id}`), 410, /no longer takes payments/);

    // The test wallet never pays a live charge: a refused step, with the way back to the payment.
    const charge = (await app.call("POST", "/v1/charges", { key: live(), body: { orderId: `bp-${randomBytes(3).toString("hex")}`, amount: "3" } })).body;
    const refused = await expectBuyerPage(await post(`/pay/${charge.id}/test-payment`), 409, /<h1>This payment cannot take this step now<\/h1>/);
    expect(refused).toContain(`<a href="/pay/${charge.id}">Back to the payment</a>`);
    // A network the charge's mode does not offer.
    const chain = await expectBuyerPage(await post(`/pay/${charge.id}/chain`, { chainId: "31337" }), 400, /<h1>This network is not available<\/h1>/);
    expect(chain).toContain(`<a href="/pay/${charge.id}">Back to the payment</a>`);
    // A body that is not a form, and a path id longer than any id.
    const json = await page(`/pay/l/${link.id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    await expectBuyerPage(json, 400, /This request could not be handled/);
    await expectBuyerPage(await page(`/pay/${"x".repeat(201)}`), 400, /This request could not be handled/, null);

    // One address may start 20 payments a minute from a link.
    const open = (await app.call("POST", "/v1/payment_links", { key: test(), body: { name: "Cups", amount: "2" } })).body;
    for (let i = 0; i < 20; i++) expect((await post(`/pay/l/${open.id}`)).status).toBe(303);
    const busy = await post(`/pay/l/${open.id}`);
    expect(busy.headers.get("retry-after")).toMatch(/^\d+$/);
    // Refused before the database is asked anything, the seller's name included.
    const html = await expectBuyerPage(busy, 429, /<h1>Too many attempts<\/h1>[\s\S]*Wait a minute, then try again/, null);
    expect(html).toContain(`<a href="/pay/l/${open.id}">Back to the payment link</a>`);
  });

  it("one renderer for every error code: whatever the API's message says, the buyer reads none of it", () => {
    const message = `No live-mode settlement wallet. Set one with: npx stablegate merchant update mer_123 --live-wallet 0x… (at Object.<anonymous> (/app/x.js:1:2))`;
    const topics: BuyerTopic[] = ["payment", "invoice", "payment link", "refund"];
    for (const code of Object.keys(STATUS_OF_CODE) as ErrorCode[]) {
      for (const topic of topics) {
        for (const merchantName of [SELLER, null]) {
          const { status, html } = buyerErrorPage(new AppError(code, message, "liveWallet"), { topic, merchantName, backUrl: null, basePath: "/pay" });
          expect(status, code).toBeGreaterThanOrEqual(400);
          expect(html).not.toContain("Set one with");
          expect(html).not.toContain("x.js");
          for (const text of OPERATOR_TEXT) expect(html.toLowerCase(), `${code} ${topic}`).not.toContain(text);
          expect(html).toMatch(/<h1>[^<]+<\/h1><\/header>\n<p>[^<]+<\/p>/);
          if (merchantName) expect(html).toContain(`<p class="merchant">${SELLER}</p>`);
        }
      }
    }
    expect(buyerErrorPage(new AppError("internal_error", message), { topic: "payment", merchantName: SELLER, backUrl: null, basePath: "/pay" }).status).toBe(
      500,
    );
  });
});

describe("the refund claim link after the claim", () => {
  const token = () => randomBytes(24).toString("base64url").slice(0, 32);
  /** A refund of 2.50 on Base of a charge of the shop, waiting for the buyer's address. */
  async function claimableRefund(over: Record<string, unknown> = {}) {
    const charge = (await app.call("POST", "/v1/charges", { key: test(), body: { orderId: `claim-${randomBytes(3).toString("hex")}`, amount: "5" } })).body;
    const claimToken = token();
    const refund = await app.db.prisma.refund.create({
      data: {
        id: `ref_${randomBytes(12).toString("hex")}`,
        merchantId: shop.merchant.id,
        livemode: false,
        chargeId: charge.id,
        amount: "2500000",
        status: "AWAITING_ADDRESS",
        chainId: 8453,
        fromAddress: WALLET,
        claimToken,
        afterBlock: 0n,
        ...over,
      },
    });
    return { refund, url: `/pay/refunds/${refund.id}?token=${claimToken}`, claimToken };
  }
  /** The status paragraph of the claim page, as text. */
  async function statusOf(url: string): Promise<{ status: string; html: string }> {
    const res = await page(url);
    const html = await res.text();
    expect(res.status, html.slice(0, 300)).toBe(200);
    for (const text of OPERATOR_TEXT) expect(html.toLowerCase()).not.toContain(text);
    const status = /<p id="status" class="status" role="status"[^>]*>([\s\S]*?)<\/p>/.exec(html)?.[1] ?? "";
    return { status: status.replace(/<[^>]+>/g, ""), html };
  }

  it("shows claimed, on its way, then completed with the transaction's link, where it used to say 'not found'", async () => {
    const { refund, url, claimToken } = await claimableRefund();
    expect(await (await page(url)).text()).toContain("Send my refund to this address");

    const claimed = await post(`/pay/refunds/${refund.id}`, { token: claimToken, address: BUYER, confirmAddress: BUYER.toLowerCase() });
    expect(claimed.status).toBe(303);
    expect(claimed.headers.get("location")).toBe(url);
    let shown = await statusOf(url);
    expect(shown.status).toBe(`Claimed: ${SELLER} will send it on Base to ${BUYER}. It arrives in that wallet once ${SELLER} has sent it.`);
    expect(shown.html).not.toContain("<form");

    // A second post (a reload, another tab) changes nothing.
    expect((await post(`/pay/refunds/${refund.id}`, { token: claimToken, address: WALLET, confirmAddress: WALLET })).status).toBe(303);
    expect((await app.db.prisma.refund.findUniqueOrThrow({ where: { id: refund.id } })).address).toBe(BUYER);

    const tx = `0x${"ab".repeat(32)}`;
    await app.db.prisma.refund.update({ where: { id: refund.id }, data: { txHash: tx } });
    shown = await statusOf(url);
    expect(shown.status).toBe(`On its way: the transfer to ${BUYER} is on Base, waiting for confirmations.`);
    expect(shown.html).toContain(`<a href="https://basescan.org/tx/${tx}" class="address">View the transaction</a>`);

    await app.db.prisma.refund.update({ where: { id: refund.id }, data: { status: "COMPLETED", completedAt: new Date() } });
    shown = await statusOf(url);
    expect(shown.status).toBe(`Completed: 2.50 USDC arrived at ${BUYER} on Base.`);
    expect(shown.html).toContain(`href="https://basescan.org/tx/${tx}"`);
    // Still the token's alone.
    await expectBuyerPage(await page(`/pay/refunds/${refund.id}?token=${token()}`), 404, /Refund not found/, null);
  });

  it("shows a transfer that did not go through, and a cancelled refund", async () => {
    const { refund, url } = await claimableRefund({ status: "AWAITING_PAYMENT", address: BUYER });
    await app.db.prisma.authorization.create({
      data: {
        id: `auth_${randomBytes(12).toString("hex")}`,
        purpose: "REFUND",
        chargeId: refund.chargeId,
        refundId: refund.id,
        chainId: 8453,
        fromAddress: WALLET,
        toAddress: BUYER,
        value: "2500000",
        validAfter: "0",
        validBefore: "1",
        nonce: `0x${randomBytes(32).toString("hex")}`,
        signature: `0x${"00".repeat(65)}`,
        status: "FAILED",
        error: "reverted",
        endedAt: new Date(),
        endReason: "expired",
      },
    });
    expect((await statusOf(url)).status).toBe(
      `Not sent yet: ${SELLER}'s transfer to ${BUYER} did not go through, so nothing has arrived yet. If it does not arrive soon, contact ${SELLER}.`.replace(
        "'",
        "&#39;",
      ),
    );

    const cancelled = await claimableRefund();
    const res = await app.call("POST", `/v1/refunds/${cancelled.refund.id}/cancel`, { key: test() });
    expect(res.body.status, res.text).toBe("CANCELLED");
    const shown = await statusOf(cancelled.url);
    expect(shown.status).toBe(`Cancelled: ${SELLER} cancelled this refund, so nothing will be sent. Contact ${SELLER} if you expected it.`);
    expect(shown.html).not.toContain("<form");
    // The claim's post changes nothing now.
    expect((await post(`/pay/refunds/${cancelled.refund.id}`, { token: cancelled.claimToken, address: BUYER, confirmAddress: BUYER })).status).toBe(303);
    expect((await app.db.prisma.refund.findUniqueOrThrow({ where: { id: cancelled.refund.id } })).status).toBe("CANCELLED");
  });
});
