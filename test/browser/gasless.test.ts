// Paying without gas on the hosted page, in a real browser against the service on an anvil devnet
// with its chain runner: a buyer holding USDC and no ETH signs an EIP-3009 transferWithAuthorization
// in an injected EIP-1193 wallet (eth_signTypedData_v4, signed in Node), the page hands it to
// POST /v1/public/charges/:id/authorizations and the service relays it, paying the gas. A wallet that
// cannot sign typed data falls back to the normal transfer. Screenshots go to test/.output/.
import { mkdirSync } from "node:fs";
import { getAddress, Wallet } from "ethers";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain, testWalletDevnet } from "../helpers/chain.js";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const CONFIRMATIONS = 2;
const GASLESS = "Pay with Test Wallet (no gas needed)";
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
    body: { orderId: `gasless-${++seq}`, amount: "5.00", description: "One mug", successUrl: null, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

/** A fresh buyer holding `usdcUnits` of USDC and no ETH at all. */
async function newBuyer(usdcUnits = 10_000_000n): Promise<Wallet> {
  const buyer = new Wallet(Wallet.createRandom().privateKey, chain.provider);
  await chain.mint(buyer.address, usdcUnits);
  expect(await chain.provider.getBalance(buyer.address)).toBe(0n);
  expect(await chain.balance(buyer.address)).toBe(usdcUnits);
  return buyer;
}

interface Injected {
  page: Page;
  /** The methods the page asked the wallet for, in order. */
  calls: string[];
  /** The typed data the wallet was asked to sign (parsed). */
  signed: any[];
  /** What the page's console said about its Content Security Policy. */
  cspErrors: string[];
}

/**
 * A page with an EIP-1193 wallet (announced through EIP-6963) of `buyer`: it signs typed data in Node
 * when `typedData`, and otherwise answers eth_signTypedData_v4 with EIP-1193's 4200 (unsupported method).
 */
async function pageWithWallet(buyer: Wallet, opts: { typedData: boolean; width?: number; bypassCSP?: boolean }): Promise<Injected> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: 900 }, bypassCSP: opts.bypassCSP ?? false });
  const page = await context.newPage();
  const calls: string[] = [];
  const signed: any[] = [];
  await page.exposeFunction("__testWallet", async (method: string, params: any[]) => {
    calls.push(method);
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [buyer.address];
      case "eth_chainId":
        return "0x7a69";
      case "wallet_switchEthereumChain":
        return null;
      case "eth_call":
        return chain.provider.send("eth_call", params);
      case "eth_signTypedData_v4": {
        expect(params[0]).toBe(buyer.address);
        const typed = JSON.parse(params[1]);
        signed.push(typed);
        // ethers derives the domain's type itself.
        const { EIP712Domain: _, ...types } = typed.types;
        return buyer.signTypedData(typed.domain, types, typed.message);
      }
      case "eth_sendTransaction": {
        const tx = await buyer.sendTransaction({ to: params[0].to, data: params[0].data });
        return tx.hash;
      }
    }
    throw new Error(`unsupported method ${method}`);
  });
  await page.addInitScript((typedData: boolean) => {
    const request = ({ method, params }: { method: string; params?: unknown[] }) => {
      if (method === "eth_signTypedData_v4" && !typedData) return Promise.reject({ code: 4200, message: "The requested method is not supported" });
      return (window as any).__testWallet(method, params ?? []);
    };
    const provider = { request };
    const info = { uuid: "test-wallet", name: "Test Wallet", icon: "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>", rdns: "test.wallet" };
    const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
    window.addEventListener("eip6963:requestProvider", announce);
    announce();
  }, opts.typedData);
  const cspErrors: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  return { page, calls, signed, cspErrors };
}

const statusOf = (page: Page) => page.locator("#status");
const messageOf = (page: Page) => page.locator("#wallet-message");

describe("hosted page: pay without gas", () => {
  it("a buyer with USDC and no ETH signs in the wallet, the service relays it, the page follows it to COMPLETED", async () => {
    const buyer = await newBuyer();
    const charge = await newCharge();
    const { page, calls, signed, cspErrors } = await pageWithWallet(buyer, { typedData: true });
    await page.goto(`${app.url}/pay/${charge.id}`);
    await page.getByLabel("Local devnet").check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address");
    const clone = (await app.call("GET", `/v1/charges/${charge.id}`)).body.cloneAddress as string;
    expect(await page.locator("#address").textContent()).toBe(clone);

    // Offered first, with the normal transfer kept after it.
    const gasless = page.getByRole("button", { name: GASLESS });
    const normal = page.getByRole("button", { name: "Pay with Test Wallet", exact: true });
    await expect.poll(() => gasless.isVisible()).toBe(true);
    expect(await normal.isVisible()).toBe(true);
    expect(await page.locator(".wallet button:not([hidden])").allInnerTexts()).toEqual([GASLESS, "Pay with Test Wallet"]);

    const answer = page.waitForResponse((r) => r.url().endsWith(`/v1/public/charges/${charge.id}/authorizations`) && r.request().method() === "POST");
    await gasless.click();
    const response = await answer;
    const body = await response.json();
    expect(response.status(), JSON.stringify(body)).toBe(202);
    expect(body).toMatchObject({ object: "charge_authorization", chargeId: charge.id, value: "5.00", error: null });
    expect(["SENT", "MINED"]).toContain(body.status);
    expect(body.txHash).toMatch(/^0x[0-9a-f]{64}$/);

    // What the wallet signed: the whole amount to the charge's clone, under the token's own domain.
    expect(signed).toHaveLength(1);
    const typed = signed[0];
    expect(typed.primaryType).toBe("TransferWithAuthorization");
    expect(typed.domain).toEqual({ name: "USD Coin", version: "2", chainId: 31337, verifyingContract: usdc });
    expect(getAddress(typed.message.to)).toBe(getAddress(clone));
    expect(typed.message.from).toBe(buyer.address);
    expect(typed.message.value).toBe("5000000");
    expect(typed.message.validAfter).toBe("0");
    expect(Number(typed.message.validBefore) - Date.now() / 1000).toBeGreaterThan(3500);
    expect(typed.message.nonce).toMatch(/^0x[0-9a-f]{64}$/);
    expect(calls).not.toContain("eth_sendTransaction");

    await expect.poll(() => messageOf(page).textContent(), { timeout: 15_000 }).toBe(`Payment sent without gas: ${body.txHash}`);
    await expect.poll(() => statusOf(page).textContent(), { timeout: 30_000 }).toBe("Payment complete. Thank you!");
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body).toMatchObject({ status: "COMPLETED", amountReceived: "5.00" });
    expect(await chain.provider.getBalance(buyer.address)).toBe(0n);
    expect(await chain.balance(buyer.address)).toBe(5_000_000n);
    expect(cspErrors).toEqual([]);
    await page.context().close();
  });

  it("a wallet that cannot sign typed data (4200) falls back to the normal transfer, which needs gas", async () => {
    const buyer = await newBuyer();
    const charge = await newCharge();
    await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    const { page, calls, signed } = await pageWithWallet(buyer, { typedData: false });
    const posted: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/authorizations")) posted.push(r.url());
    });
    await page.goto(`${app.url}/pay/${charge.id}`);
    await page.getByRole("button", { name: GASLESS }).click();
    // The buyer has no ETH, so the normal transfer then stops at the network fee.
    await expect
      .poll(() => messageOf(page).textContent(), { timeout: 15_000 })
      .toBe("Your wallet cannot sign a payment without gas. Your wallet cannot pay the network fee on Local devnet. Add some of its native token for gas.");
    expect(calls).toContain("eth_sendTransaction");
    expect(signed).toEqual([]);
    expect(posted).toEqual([]);
    // From then on the page offers only the normal transfer, as its main button.
    expect(await page.getByRole("button", { name: GASLESS }).isVisible()).toBe(false);
    const normal = page.getByRole("button", { name: "Pay with Test Wallet", exact: true });
    expect(await normal.isEnabled()).toBe(true);
    expect(await normal.getAttribute("class")).not.toContain("secondary");
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body).toMatchObject({ status: "PENDING", amountReceived: null });
    await page.context().close();
  });

  it("with the gasless button shown: accessible (axe), holds at 360 px, keyboard order gasless then normal", async () => {
    const buyer = await newBuyer();
    const charge = await newCharge();
    await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    const { page } = await pageWithWallet(buyer, { typedData: true, width: 360, bypassCSP: true });
    await page.goto(`${app.url}/pay/${charge.id}`);
    await page.waitForSelector("#pay-gasless:not([hidden])");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.screenshot({ path: new URL("pay-gasless-360.png", OUTPUT).pathname, fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    const stops: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press("Tab");
      stops.push(await page.evaluate(() => (document.activeElement as HTMLElement).innerText.trim()));
    }
    expect(stops).toEqual(["Copy amount", "Copy address", GASLESS, "Pay with Test Wallet"]);
    await page.context().close();
  });
});
