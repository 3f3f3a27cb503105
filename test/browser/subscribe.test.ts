// The subscription checkout and manage pages in a real browser against the service on an anvil
// devnet: a buyer's EIP-1193 wallet (announced through EIP-6963, signing in Node) picks the devnet,
// signs the USDC permit and the spend permission, and the authorization is stored for the engine;
// then the manage page cancels at the period's end and asks the wallet to revoke on chain.
// Screenshots go to test/.output/.
import { mkdirSync } from "node:fs";
import { getAddress, parseEther, Wallet } from "ethers";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { loadPermission, revokeCalldata } from "../../src/chain/subscriptions.js";
import { Prisma } from "../../src/generated/prisma/client.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { newSubscriptionRow } from "../helpers/subscription-rows.js";

const OUTPUT = new URL("../.output/", import.meta.url);
let chain: TestChain;
let devnet: EnabledChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let producer: NodeJS.Timeout;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
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

interface Injected {
  page: Page;
  /** The methods the page asked the wallet for, in order. */
  calls: string[];
  /** The typed data the wallet was asked to sign (parsed), in order. */
  signed: any[];
  /** The transactions the wallet was asked to send. */
  sent: any[];
  cspErrors: string[];
}

/** A page with an EIP-1193 wallet of `buyer`, announced through EIP-6963 as "Test Wallet". */
async function pageWithWallet(buyer: Wallet, opts: { width?: number; bypassCSP?: boolean } = {}): Promise<Injected> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: 900 }, bypassCSP: opts.bypassCSP ?? false });
  const page = await context.newPage();
  const calls: string[] = [];
  const signed: any[] = [];
  const sent: any[] = [];
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
      case "eth_signTypedData_v4": {
        expect(params[0]).toBe(buyer.address);
        const typed = JSON.parse(params[1]);
        signed.push(typed);
        // ethers derives the domain's type itself.
        const { EIP712Domain: _, ...types } = typed.types;
        return buyer.signTypedData(typed.domain, types, typed.message);
      }
      case "eth_sendTransaction": {
        sent.push(params[0]);
        const tx = await buyer.connect(chain.provider).sendTransaction({ to: params[0].to, data: params[0].data });
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
  const cspErrors: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  return { page, calls, signed, sent, cspErrors };
}

describe("subscription checkout and manage pages", () => {
  it("the buyer reads what they allow, picks the devnet, signs the permit then the permission; then cancels at the period's end and revokes on chain", async () => {
    const buyer = new Wallet(Wallet.createRandom().privateKey);
    const funded = 100_000_000n;
    await chain.mint(buyer.address, funded);
    const sub = await newSubscriptionRow(app, { name: "Pro plan" });
    const { page, signed, sent, cspErrors } = await pageWithWallet(buyer);

    await page.goto(`${app.url}/pay/subscribe/${sub.id}`);
    expect(await page.locator("#price").textContent()).toBe("25.00 USDC every month (30 days)");
    expect(await page.locator("#allowance").textContent()).toBe("Up to 25.00 USDC every month (30 days), until you cancel.");
    await expect.poll(() => page.locator("#subscribe").innerText()).toBe("Subscribe with Test Wallet");
    await page.getByLabel("Local devnet").check();

    const answer = page.waitForResponse((r) => r.url().endsWith(`/pay/subscribe/${sub.id}/authorize`) && r.request().method() === "POST");
    await page.getByRole("button", { name: "Subscribe with Test Wallet" }).click();
    const response = await answer;
    expect(response.status(), await response.text()).toBe(202);

    // The permit first, then the permission, each under its own domain.
    expect(signed.map((t) => t.primaryType)).toEqual(["Permit", "Permission"]);
    expect(signed[0].domain).toMatchObject({ name: "USD Coin", chainId: 31337, verifyingContract: getAddress(devnet.usdc) });
    expect(signed[0].message).toMatchObject({ owner: buyer.address, spender: devnet.subscriptions });
    expect(signed[1].domain).toMatchObject({ name: "Stablegate Subscriptions", version: "1", chainId: 31337, verifyingContract: devnet.subscriptions });
    expect(signed[1].message).toMatchObject({ payer: buyer.address, amount: "25000000" });
    await expect.poll(() => page.locator("#status").textContent()).toContain("Your authorization was received");
    const stored = await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } });
    expect(stored).toMatchObject({ payer: buyer.address, chainId: 31337, permissionSignature: expect.stringMatching(/^0x/) });

    // The worker relays the permit, the permission and the first pull; the page follows it.
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 30_000 }).toContain("You are subscribed");
    const active = await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } });
    expect(active.status).toBe("ACTIVE");
    expect(await chain.balance(buyer.address)).toBe(funded - active.amount);
    expect(cspErrors).toEqual([]);

    // The manage page: cancel at the period's end.
    await page.goto(`${app.url}/pay/subscribe/${sub.id}/manage?token=${sub.manageToken}`);
    expect(await page.locator("#status").textContent()).toBe("Active");
    await page.getByRole("button", { name: /Cancel at the end of this period/ }).click();
    await page.waitForSelector("#notice");
    expect(await page.locator("#notice").textContent()).toContain("will end at the end of this period");
    expect(await page.locator("#status").textContent()).toMatch(/^Active, ends on \d{4}-\d{2}-\d{2}$/);
    expect(await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } })).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: true });

    // Revoke on chain: the payer's own wallet sends revoke(permission) to the contract (it pays the gas).
    await chain.provider.send("anvil_setBalance", [buyer.address, `0x${parseEther("1").toString(16)}`]);
    await page.getByRole("button", { name: "Revoke with Test Wallet" }).click();
    await expect.poll(() => page.locator("#wallet-message").textContent(), { timeout: 15_000 }).toMatch(/^Revoke sent: transaction 0x[0-9a-f]{64}\./);
    expect(sent).toEqual([{ from: buyer.address, to: devnet.subscriptions, data: revokeCalldata(loadPermission(stored.permission as never)) }]);
    expect(cspErrors).toEqual([]);
    await page.context().close();
  });

  it("a relay that failed: the page following the status says why and offers the checkout again", async () => {
    const buyer = new Wallet(Wallet.createRandom().privateKey);
    const sub = await newSubscriptionRow(app);
    const { page } = await pageWithWallet(buyer);
    await page.goto(`${app.url}/pay/subscribe/${sub.id}`);
    const answer = page.waitForResponse((r) => r.url().endsWith(`/pay/subscribe/${sub.id}/authorize`));
    await page.getByRole("button", { name: "Subscribe with Test Wallet" }).click();
    expect((await answer).status()).toBe(202);
    expect(await page.locator("#authorize").isVisible()).toBe(false);
    // What the engine does when the checkout's transaction fails (the buyer holds no USDC here).
    await app.db.prisma.$transaction([
      app.db.prisma.subscriptionPull.create({
        data: {
          id: `spull_${sub.id.slice(4)}`,
          subscriptionId: sub.id,
          chainId: 31337,
          periodIndex: 0,
          amount: sub.amount,
          checkout: true,
          status: "FAILED",
          reason: "insufficient_balance",
        },
      }),
      app.db.prisma.subscription.update({ where: { id: sub.id }, data: { permission: Prisma.DbNull, permissionHash: null, permissionSignature: null } }),
    ]);
    await expect.poll(() => page.locator("#wallet-message").textContent(), { timeout: 15_000 }).toContain("did not hold enough USDC");
    expect(await page.locator("#status").textContent()).toBe("Not authorized yet.");
    expect(await page.getByRole("button", { name: "Subscribe with Test Wallet" }).isEnabled()).toBe(true);
    await page.context().close();
  });

  it("both pages are accessible (axe) and hold at 360 px", async () => {
    const sub = await newSubscriptionRow(app, { trialDays: 7 });
    const { page } = await pageWithWallet(new Wallet(Wallet.createRandom().privateKey), { width: 360, bypassCSP: true });
    await page.goto(`${app.url}/pay/subscribe/${sub.id}`);
    await expect.poll(() => page.locator("#subscribe").innerText()).toBe("Subscribe with Test Wallet");
    expect(await page.locator("#trial").textContent()).toBe("Free for 7 days, then 25.00 USDC every month (30 days), until you cancel.");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.screenshot({ path: new URL("subscribe-checkout-360.png", OUTPUT).pathname, fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${app.url}/pay/subscribe/${sub.id}/manage?token=${sub.manageToken}`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.screenshot({ path: new URL("subscribe-manage-360.png", OUTPUT).pathname, fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });
});
