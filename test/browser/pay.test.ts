// The hosted payment page in a real browser (Debian's chromium driven by playwright-core) against
// the service on an anvil devnet with its chain runner: pay with an injected EIP-1193 wallet, a
// partial payment and its top-up, expiry, the QR code, accessibility, screenshots and page weight.
// Run by `npm run test:browser` (.ci/run installs chromium); screenshots and figures go to test/.output/.
import { mkdirSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import jsQR from "jsqr";
import type { Browser, Page } from "playwright-core";
import { PNG } from "pngjs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { expireDueCharges } from "../../src/domain/charges/expire.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain, testWalletDevnet } from "../helpers/chain.js";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const CONFIRMATIONS = 2;
let chain: TestChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let producer: NodeJS.Timeout;
let usdc: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  const devnet = await chain.enabled(CONFIRMATIONS);
  usdc = await chain.usdc.getAddress();
  app = await startApp(POLLING, { chains: new ChainSet([devnet]), devnet: await testWalletDevnet(chain) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), {
    intervalMs: 50,
    settings: { ...SETTINGS, feed: app.live },
    bumpAfterMs: 60_000,
  });
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  await browser?.close();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
const newCharge = async (body: Record<string, unknown> = {}) => {
  const res = await app.call("POST", "/v1/charges", {
    body: { orderId: `browser-${++seq}`, amount: "25", description: "Two mugs", successUrl: `${app.url}/healthz?shop=1`, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

/** A page with an EIP-1193 wallet (announced through EIP-6963) that signs with an anvil account. */
async function pageWithWallet(width = 1280): Promise<{ page: Page; navigations: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const signer = chain.wallet(3);
  await page.exposeFunction("__testWallet", async (method: string, params: any[]) => {
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [signer.address];
      case "eth_chainId":
        return "0x7a69";
      case "wallet_switchEthereumChain":
        return null;
      case "eth_call":
        return chain.provider.send("eth_call", params);
      case "eth_sendTransaction": {
        const tx = await signer.sendTransaction({ to: params[0].to, data: params[0].data });
        return tx.hash;
      }
    }
    throw new Error(`unsupported method ${method}`);
  });
  await page.addInitScript(() => {
    const provider = { request: ({ method, params }: { method: string; params?: unknown[] }) => (window as any).__testWallet(method, params ?? []) };
    const info = { uuid: "test-wallet", name: "Test Wallet", icon: "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>", rdns: "test.wallet" };
    const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
    window.addEventListener("eip6963:requestProvider", announce);
    announce();
  });
  const navigations: string[] = [];
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) navigations.push(frame.url());
  });
  return { page, navigations };
}

const statusOf = (page: Page) => page.locator("#status");

describe("hosted page in a browser", () => {
  it("full flow: pick the chain, pay with the wallet, watch it complete without reload, land on successUrl", async () => {
    // The wallet needs the USDC it pays with.
    await chain.mint(chain.wallet(3).address, 100_000_000n);
    const charge = await newCharge();
    const { page, navigations } = await pageWithWallet();
    const started = Date.now();
    await page.goto(`${app.url}/pay/${charge.id}`);
    await expect.poll(() => page.locator(".amount").textContent()).toBe("25.00 USDC");
    await page.getByLabel("Local devnet").check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address");
    expect(await page.locator("#address").textContent()).toBe((await app.call("GET", `/v1/charges/${charge.id}`)).body.cloneAddress);

    const beforePay = navigations.length;
    await page.getByRole("button", { name: "Pay with Test Wallet", exact: true }).click();
    await expect.poll(() => page.locator("#wallet-message").textContent(), { timeout: 15_000 }).toMatch(/^Sent\. Transaction 0x/);
    await expect.poll(() => statusOf(page).textContent(), { timeout: 30_000 }).toBe("Payment complete. Thank you!");
    expect(navigations.length).toBe(beforePay); // live, no reload
    await page.waitForURL(/\/healthz\?/, { timeout: 10_000 });
    const landed = new URL(page.url());
    expect(Object.fromEntries(landed.searchParams)).toEqual({ shop: "1", chargeId: charge.id, orderId: charge.orderId, status: "COMPLETED" });
    expect(Date.now() - started).toBeLessThan(60_000);
    await page.context().close();
  });

  it("partial payment shows what is left, the top-up completes it; the QR decodes to the exact EIP-681 URI", async () => {
    const charge = await newCharge({ successUrl: null });
    const { page } = await pageWithWallet(360);
    await page.goto(`${app.url}/pay/${charge.id}`);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address");
    const clone = (await page.locator("#address").textContent())!;
    // Polled: the page's script unhides the copy buttons and announces the deadline above the code
    // after #address exists, and a screenshot taken while the layout moves cuts the code.
    await expect.poll(() => decodeQr(page)).toBe(`ethereum:${usdc}@31337/transfer?address=${clone}&uint256=25000000`);

    await chain.pay(chain.wallet(1), clone, 10_000_000n);
    await expect.poll(() => statusOf(page).textContent(), { timeout: 30_000 }).toBe("Received 10.00 of 25.00 USDC. Send 15.00 more.");
    await expect.poll(() => page.locator("#exact-amount").textContent(), { timeout: 10_000 }).toBe("15.00");
    await expect.poll(() => decodeQr(page)).toBe(`ethereum:${usdc}@31337/transfer?address=${clone}&uint256=15000000`);

    await page.getByRole("button", { name: "Pay with test wallet (TEST MODE)" }).click();
    await expect.poll(() => statusOf(page).textContent(), { timeout: 30_000 }).toBe("Payment complete. Thank you!");
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body).toMatchObject({ status: "COMPLETED", amountReceived: "25.00" });
    await page.context().close();
  });

  it("shows the expired state live, with the way back to the shop", async () => {
    const charge = await newCharge({ cancelUrl: `${app.url}/healthz?cancelled=1` });
    const { page } = await pageWithWallet();
    await page.goto(`${app.url}/pay/${charge.id}`);
    await expect.poll(() => statusOf(page).textContent()).toBe("Choose a network to pay on.");
    await expireDueCharges(app.db.prisma, { ...SETTINGS, feed: app.live }, new Date(Date.now() + 3_600_000));
    await expect.poll(() => statusOf(page).textContent(), { timeout: 10_000 }).toMatch(/^This payment has expired/);
    expect(await page.getByRole("link", { name: "Back to Test Shop" }).getAttribute("href")).toBe(`${app.url}/healthz?cancelled=1`);
    await page.context().close();
  });

  it("is accessible (axe: no serious violations), holds at 360 px and 1280 px, and is light and quick", async () => {
    const charge = await newCharge();
    await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    const metrics: Record<string, unknown> = {};
    for (const width of [360, 1280]) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(`${app.url}/pay/${charge.id}`);
      await page.waitForSelector("#address");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: new URL(`pay-${width}.png`, OUTPUT).pathname, fullPage: true });
      expect(await seriousViolations(page)).toEqual([]);
      metrics[`firstPaintMs${width}`] = await page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null);
      await context.close();
    }
    // Keyboard: Tab reaches the copy buttons in reading order, each with a name.
    const { page } = await pageWithWallet();
    await page.goto(`${app.url}/pay/${charge.id}`);
    await page.waitForSelector("#pay-wallet:not([hidden])");
    const stops: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab");
      stops.push(await page.evaluate(() => (document.activeElement as HTMLElement).innerText.trim()));
    }
    // Payment without gas is offered first (the charge is on the devnet, above GASLESS_MIN_AMOUNT).
    expect(stops.slice(0, 4)).toEqual(["Copy amount", "Copy address", "Pay with Test Wallet (no gas needed)", "Pay with Test Wallet"]);
    await page.context().close();

    let weight = 0;
    for (const path of [`/pay/${charge.id}`, "/pay/assets/pay.js", "/pay/assets/wallets.js", "/pay/assets/pay.css"]) {
      weight += gzipSync(Buffer.from(await (await fetch(app.url + path)).arrayBuffer())).length;
    }
    metrics.pageWeightGzipBytes = weight;
    writeFileSync(new URL("pay-metrics.json", OUTPUT), `${JSON.stringify(metrics, null, 2)}\n`);
    console.log("hosted page:", JSON.stringify(metrics));
    expect(weight).toBeLessThanOrEqual(60 * 1024);
  });
});

// jsqr is CommonJS: its function is the default export under Node's interop, or the module itself.
const decode = ((jsQR as unknown as { default?: unknown }).default ?? jsQR) as (d: Uint8ClampedArray, w: number, h: number) => { data: string } | null;

/** Screenshots the page's QR code and decodes it. */
async function decodeQr(page: Page): Promise<string | null> {
  const png = PNG.sync.read(await page.locator("figure.qr svg").screenshot());
  return decode(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
}
