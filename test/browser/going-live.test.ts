// Going live in a real browser (Debian's chromium through playwright-core): the Test/Live switch reads
// clearly in both modes; switching to live while it is not ready says so on the page, linking to
// Home's checklist, whose items go from "to do" to done as they are fixed; a buyer opening a live
// payment link of a merchant without a live wallet gets the styled "not available right now" page in
// the merchant's name, with no operator text; a buyer's refund claim link shows the refund's status
// after the claim. Accessibility at 1280 and 360 px, screenshots in test/.output/, no page errors.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { parseEther } from "ethers";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, enableChain } from "../../src/chain/chains.js";
import { factoryV2Address } from "../../src/chain/clones.js";
import { recordRelayerBalance } from "../../src/domain/chain-status.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { auditPage, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const SELLER = "Rosa Roastery";
const BUYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const FEE_RECIPIENT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const OPERATOR_TEXT = ["npx", "stablegate ", "merchant update", "--live-wallet", "mer_"];
const WIDTHS = [1280, 360] as const;

let app: TestApp;
let browser: Browser;
let shop: Awaited<ReturnType<TestApp["newMerchant"]>>;
let email: string;
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  // Base as this service's mainnet (with an explorer): nothing here calls its RPC URL.
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
  app = await startApp(POLLING, { chains: new ChainSet([base]) });
  shop = await app.newMerchant();
  await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { name: SELLER, liveWallet: null } });
  email = (await createUser(app.db.prisma, shop.merchant.id, { email: `live-${randomBytes(4).toString("hex")}@shop.example`, password: PASSWORD }, OPERATOR))
    .email;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function newPage(width: number): Promise<Page> {
  const page = await openPage(browser, { width, height: 800 });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  return page;
}

/** The page as it is at its width (see auditPage). */
const audit = (page: Page, name: string, width: number) => auditPage(page, `going-live-${name}`, width);

const signIn = (page: Page) => signInAs(page, app.url, email, { path: "/charges" });

const checklist = (page: Page) => page.getByRole("region", { name: "Going live" });
const item = (page: Page, key: string) => checklist(page).locator(`[data-check="${key}"]`);

describe("going live", () => {
  it("the switch names both modes; live mode not ready says so and links to Home's checklist, whose items turn done as they are fixed", async () => {
    const page = await newPage(1280);
    await signIn(page);
    const toggle = page.getByRole("switch", { name: "Live mode" });
    expect(await toggle.isChecked()).toBe(false);
    expect(await page.locator(".mode-switch").innerText()).toMatch(/^Test mode\s+Live mode$/);
    expect(await page.locator(".mode-switch[data-mode=test] .mode-test").evaluate((e) => getComputedStyle(e).fontWeight)).toBe("700");
    await page.locator("header.top").screenshot({ path: new URL("going-live-switch-test-1280.png", OUTPUT).pathname });

    await toggle.click();
    await expect.poll(() => page.getByRole("switch", { name: "Live mode" }).isChecked()).toBe(true);
    expect(await page.locator(".mode-switch[data-mode=live] .mode-live").evaluate((e) => getComputedStyle(e).fontWeight)).toBe("700");
    await page.locator("header.top").screenshot({ path: new URL("going-live-switch-live-1280.png", OUTPUT).pathname });
    // On a page other than Home: the note, and its link to the checklist.
    const note = page.locator(".live-not-ready");
    await expect.poll(() => note.textContent()).toBe("Live mode is not ready to take real money yet. See the checklist");
    await note.getByRole("link", { name: "See the checklist" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).first().textContent()).toBe("Home");
    await checklist(page).waitFor();
    expect(await note.count()).toBe(0);
    expect(await checklist(page).locator("p").first().textContent()).toBe("Live mode is not ready: 3 of 3 items are still to do.");
    for (const key of ["LIVE_WALLET", "LIVE_CHAIN", "LIVE_WEBHOOK_ENDPOINT"]) expect(await item(page, key).getAttribute("data-done")).toBe("false");
    expect(await item(page, "LIVE_WALLET").getByRole("link").textContent()).toBe("Set it in Settings");
    expect(await item(page, "LIVE_WEBHOOK_ENDPOINT").getByRole("link").textContent()).toBe("Add one in Developers");
    expect(await item(page, "LIVE_CHAIN").getByRole("link").count()).toBe(0);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      await audit(page, "checklist-not-ready", width);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // Each link goes where the item is fixed.
    await item(page, "LIVE_WALLET").getByRole("link").click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).first().textContent()).toBe("Settings");
    expect(await page.locator(".live-not-ready").count()).toBe(1);
    await page.goBack();
    await item(page, "LIVE_WEBHOOK_ENDPOINT").getByRole("link").click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).first().textContent()).toBe("Developers");
    await page.goBack();

    // Fixed, one after the other: the wallet, the relayer's balance as the worker records it, a live endpoint.
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: WALLET } });
    await recordRelayerBalance(app.db.prisma, {
      chainId: 8453,
      relayerAddress: "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
      balance: parseEther("0.2"),
      minBalance: parseEther("0.005"),
      checkedAt: new Date(),
    });
    await page.reload();
    await expect.poll(() => item(page, "LIVE_CHAIN").getAttribute("data-done")).toBe("true");
    expect(await item(page, "LIVE_WALLET").getAttribute("data-done")).toBe("true");
    expect(await checklist(page).locator("p").first().textContent()).toBe("Live mode is not ready: 1 of 3 items is still to do.");
    await app.db.prisma.webhookEndpoint.create({
      data: {
        id: `whep_${randomBytes(12).toString("hex")}`,
        merchantId: shop.merchant.id,
        livemode: true,
        url: "https://hooks.shop.example/in",
        secret: "whsec_x",
      },
    });
    await page.reload();
    await expect.poll(() => checklist(page).locator("p").first().textContent()).toBe("Live mode is ready: it takes real money.");
    for (const key of ["LIVE_WALLET", "LIVE_CHAIN", "LIVE_WEBHOOK_ENDPOINT"]) expect(await item(page, key).getAttribute("data-done")).toBe("true");
    expect(await item(page, "LIVE_CHAIN").textContent()).toContain("Base: ready (relayer funded with 0.2 ETH).");
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      await audit(page, "checklist-ready", width);
    }
    // Ready: no note on the other pages.
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Charges", exact: true }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).first().textContent()).toBe("Charges");
    await page.waitForLoadState("networkidle");
    expect(await page.locator(".live-not-ready").count()).toBe(0);
    await page.context().close();
  });

  it("a buyer at a live payment link of a merchant without a live wallet gets the styled 'not available' page in the merchant's name", async () => {
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: WALLET } });
    const link = (await app.call("POST", "/v1/payment_links", { key: shop.apiKeys.live.secret, body: { name: "Beans, 1 kg", amount: "24" } })).body;
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: null } });
    for (const width of WIDTHS) {
      const page = await newPage(width);
      const res = await page.goto(`${app.url}/pay/l/${link.id}`);
      expect(res?.status()).toBe(503);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("This payment link is not available right now");
      expect(await page.locator(".merchant").textContent()).toBe(SELLER);
      const text = (await page.locator("body").innerText()).toLowerCase();
      expect(text).toContain(`contact ${SELLER.toLowerCase()} to pay another way, or try again later.`);
      for (const t of OPERATOR_TEXT) expect(text).not.toContain(t);
      // The hosted pages' stylesheet applies (a card on a tinted page, not the browser's defaults).
      expect(await page.locator("main").evaluate((e) => getComputedStyle(e).maxWidth)).not.toBe("none");
      await audit(page, "link-unavailable", width);
      await page.context().close();
    }
    await app.db.prisma.merchant.update({ where: { id: shop.merchant.id }, data: { liveWallet: WALLET } });
  });

  it("a buyer's refund claim link shows the refund's status after the claim", async () => {
    const charge = (
      await app.call("POST", "/v1/charges", { key: shop.apiKeys.test.secret, body: { orderId: `claim-${randomBytes(3).toString("hex")}`, amount: "5" } })
    ).body;
    const token = randomBytes(24).toString("base64url").slice(0, 32);
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
        claimToken: token,
        afterBlock: 0n,
      },
    });
    const url = `${app.url}/pay/refunds/${refund.id}?token=${token}`;
    const page = await newPage(360);
    await page.goto(url);
    await page.getByLabel("Your wallet address on Base").fill(BUYER);
    await page.getByLabel("The same address again").fill(BUYER.toLowerCase());
    await page.getByRole("button", { name: "Send my refund to this address" }).click();
    await expect
      .poll(() => page.getByRole("status").textContent())
      .toBe(`Claimed: ${SELLER} will send it on Base to ${BUYER}. It arrives in that wallet once ${SELLER} has sent it.`);
    expect(page.url()).toBe(url);
    await audit(page, "claim-claimed", 360);

    const tx = `0x${"ab".repeat(32)}`;
    await app.db.prisma.refund.update({ where: { id: refund.id }, data: { txHash: tx, status: "COMPLETED", completedAt: new Date() } });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      await page.reload();
      expect(await page.getByRole("status").textContent()).toBe(`Completed: 2.50 USDC arrived at ${BUYER} on Base.`);
      expect(await page.getByRole("link", { name: "View the transaction" }).getAttribute("href")).toBe(`https://basescan.org/tx/${tx}`);
      await audit(page, "claim-completed", width);
    }
    await page.context().close();
  });

  it("no page errors or console errors anywhere", () => {
    // The browser reports each non-2xx answer (the session check before sign-in, the 503 page itself) as a failed resource.
    expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  });
});
