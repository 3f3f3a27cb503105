// The hosted payment page's wallet chooser, way back to the shop and deadline, in a real browser:
// two wallets announced through EIP-6963 are listed by name and icon, the one the buyer picks is the
// one asked to pay (and is remembered for the tab), window.ethereum stands in when none announces;
// the payment window is explained before the network is picked and its new deadline announced after;
// axe at 360 and 1280 px. Screenshots go to test/.output/.
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// A 1×1 PNG and a small SVG: the two kinds of icon wallets announce.
const PNG_ICON = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const SVG_ICON = "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 1'><rect width='1' height='1' fill='teal'/></svg>";
const WALLETS = [
  { uuid: "8f1d1c1e-0000-4000-8000-00000000000a", name: "Alpha Wallet", icon: PNG_ICON, rdns: "com.alpha" },
  { uuid: "8f1d1c1e-0000-4000-8000-00000000000b", name: "Beta Wallet", icon: SVG_ICON, rdns: "org.beta" },
];

let chain: TestChain;
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  app = await startApp(POLLING, { chains: new ChainSet([await chain.enabled(1)]) });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
const newCharge = async (body: Record<string, unknown> = {}) => {
  const res = await app.call("POST", "/v1/charges", {
    body: { orderId: `wallets-${++seq}`, amount: "0.50", cancelUrl: `${app.url}/healthz?cart=1`, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

/**
 * A page whose browser has `announced` wallets (EIP-6963) and, when `injected` is given, a
 * window.ethereum with those flags. Every wallet answers for an anvil account holding USDC; `calls`
 * records which wallet was asked what.
 */
async function pageWith(announced: typeof WALLETS, { width = 1280, injected = null as Record<string, boolean> | null, bypassCSP = false } = {}) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP });
  const page = await context.newPage();
  const signer = chain.wallet(4);
  const calls: string[] = [];
  await page.exposeFunction("__wallet", async (who: string, method: string, params: any[]) => {
    calls.push(`${who}:${method}`);
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [signer.address];
      case "eth_chainId":
        return "0x7a69";
      case "eth_call":
        return chain.provider.send("eth_call", params);
      case "eth_sendTransaction":
        return (await signer.sendTransaction({ to: params[0].to, data: params[0].data })).hash;
    }
    throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 });
  });
  await page.addInitScript(
    ([wallets, flags]) => {
      const provider = (who: string) => ({ request: ({ method, params }: any) => (window as any).__wallet(who, method, params ?? []) });
      if (flags) (window as any).ethereum = Object.assign(provider("injected"), flags);
      for (const info of wallets as any[]) {
        const detail = Object.freeze({ info: Object.freeze(info), provider: provider(info.name) });
        const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
        window.addEventListener("eip6963:requestProvider", announce);
        announce();
      }
    },
    [announced, injected] as const,
  );
  return { page, calls };
}

const timeLeft = (page: Page) => page.locator("#time-left").innerText();

describe("hosted page: wallets, the way back, the deadline", () => {
  it("explains the window before the pick, announces the new deadline after it, and keeps the way back to the shop", async () => {
    const charge = await newCharge();
    const { page } = await pageWith(WALLETS);
    await page.goto(`${app.url}/pay/${charge.id}`);
    const back = page.getByRole("link", { name: "Back to Test Shop" });
    expect(await back.getAttribute("href")).toBe(`${app.url}/healthz?cart=1`);
    // Before the pick: the time to choose (the charge's 30 minutes), and the window that follows.
    expect(await page.locator("#deadline .expires").innerText()).toMatch(/^Choose a network before \d\d:\d\d/);
    await expect.poll(() => timeLeft(page)).toMatch(/^\((29:[0-5]\d|30:00) left to choose\)$/);
    expect(await page.locator("#window-note").innerText()).toBe("Once you pick a network you have 15 minutes to pay, counted from your pick.");
    expect(await page.locator("#window-change").innerText()).toBe("");

    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address");
    // After: the deadline is the pick plus 15 minutes, counted down, and the change said aloud once.
    expect(await page.locator("#deadline .expires").innerText()).toMatch(/^Pay before \d\d:\d\d/);
    await expect.poll(() => timeLeft(page)).toMatch(/^\(1[45]:[0-5]\d left\)$/);
    expect(await page.locator("#window-note").innerText()).toBe("You have 15 minutes to pay from the moment the network was picked.");
    const change = page.locator("#window-change");
    expect(await change.getAttribute("role")).toBe("status");
    await expect
      .poll(() => change.innerText())
      .toMatch(/^Network picked: you now have 15 minutes to pay, until \d\d:\d\d( [AP]M)?\. The time to choose a network no longer applies\.$/);
    expect(await back.isVisible()).toBe(true);
    // Drawn again (a reload), the page does not announce it a second time.
    await page.reload();
    await page.waitForTimeout(800);
    expect(await change.innerText()).toBe("");
    await page.context().close();
  });

  it("announces the new deadline too when the network was picked elsewhere (another tab or device)", async () => {
    const charge = await newCharge();
    const { page } = await pageWith(WALLETS);
    await page.goto(`${app.url}/pay/${charge.id}`);
    await expect.poll(() => timeLeft(page)).toMatch(/left to choose\)$/);
    await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    await page.waitForSelector("#address", { timeout: 15_000 });
    await expect.poll(() => page.locator("#window-change").innerText()).toMatch(/^Network picked: you now have 15 minutes to pay, until /);
    await expect.poll(() => timeLeft(page)).toMatch(/^\(1[45]:[0-5]\d left\)$/);
    await page.context().close();
  });

  it("lists both wallets by name and icon, pays with the one picked, and remembers it for the tab", async () => {
    await chain.mint(chain.wallet(4).address, 10_000_000n);
    const charge = await newCharge();
    await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    const { page, calls } = await pageWith(WALLETS);
    await page.goto(`${app.url}/pay/${charge.id}`);
    const chooser = page.getByRole("group", { name: "Pay from" });
    await expect.poll(() => chooser.isVisible()).toBe(true);
    const options = chooser.getByRole("radio");
    expect(await options.count()).toBe(2);
    expect((await chooser.locator("label").allInnerTexts()).map((t) => t.trim())).toEqual(["Alpha Wallet", "Beta Wallet"]);
    expect(await chooser.locator("img").evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src))).toEqual([PNG_ICON, SVG_ICON]);
    // The icons load (the page's CSP lets data: images in) and say nothing to a screen reader.
    expect(await chooser.locator("img").evaluateAll((imgs) => imgs.map((i) => [(i as HTMLImageElement).naturalWidth > 0, i.getAttribute("alt")]))).toEqual([
      [true, ""],
      [true, ""],
    ]);
    // The first is chosen until the buyer picks; the buttons name it, never a bare "wallet".
    expect(await chooser.getByLabel("Alpha Wallet").isChecked()).toBe(true);
    expect(await page.locator("#pay-wallet").innerText()).toBe("Pay with Alpha Wallet");

    await chooser.getByLabel("Beta Wallet").check();
    const pay = page.getByRole("button", { name: "Pay with Beta Wallet", exact: true });
    expect(await pay.isVisible()).toBe(true);
    await pay.click();
    await expect.poll(() => page.locator("#wallet-message").innerText(), { timeout: 15_000 }).toMatch(/^Sent\. Transaction 0x/);
    expect(calls).toContain("Beta Wallet:eth_sendTransaction");
    expect(calls.filter((c) => !c.startsWith("Beta Wallet:"))).toEqual([]);

    // Remembered by its rdns for the tab's session: drawn again, Beta is still the one.
    await page.reload();
    await expect.poll(() => page.locator("#pay-wallet").innerText()).toBe("Pay with Beta Wallet");
    expect(await page.getByRole("group", { name: "Pay from" }).getByLabel("Beta Wallet").isChecked()).toBe(true);
    await page.context().close();
  });

  it("with one wallet: no list, the buttons name it; without EIP-6963, window.ethereum by its name; an icon that is not a data: image is not shown", async () => {
    const charge = await newCharge();
    await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    const odd = { ...WALLETS[0]!, name: "Odd Wallet", icon: `${app.url}/favicon.svg` };
    const single = await pageWith([odd]);
    await single.page.goto(`${app.url}/pay/${charge.id}`);
    await expect.poll(() => single.page.locator("#pay-wallet").innerText()).toBe("Pay with Odd Wallet");
    expect(await single.page.locator("#wallets").isHidden()).toBe(true);
    expect(await single.page.locator("#pay-wallet img").count()).toBe(0);
    await single.page.context().close();

    const injected = await pageWith([], { injected: { isMetaMask: true } });
    await injected.page.goto(`${app.url}/pay/${charge.id}`);
    await expect.poll(() => injected.page.locator("#pay-wallet").innerText()).toBe("Pay with MetaMask");
    await injected.page.context().close();
  });

  it("is accessible (axe: no serious violations) with the chooser shown, at 360 and 1280 px", async () => {
    const charge = await newCharge();
    for (const picked of [false, true]) {
      if (picked) await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
      for (const width of [360, 1280]) {
        const { page } = await pageWith(WALLETS, { width, bypassCSP: true });
        await page.goto(`${app.url}/pay/${charge.id}`);
        if (picked) await page.waitForSelector("#wallets:not([hidden])");
        await expect.poll(() => timeLeft(page)).not.toBe("");
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await page.screenshot({ path: new URL(`pay-wallets-${picked ? "pay" : "pick"}-${width}.png`, OUTPUT).pathname, fullPage: true });
        expect(await seriousViolations(page)).toEqual([]);
        await page.context().close();
      }
    }
  });
});
