// Overpayment shown, in a real browser (Debian's chromium through playwright-core) against the service
// on an anvil devnet with its chain runner: a buyer with the hosted page open pays 15 on a 10 charge
// and the page says, live, what was paid too much and that the merchant was told; the merchant's
// dashboard shows "Overpaid 5.00" on the charge and in the list, and its button fills the refund form
// with exactly the excess, which then makes that refund.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { getAddress } from "ethers";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { launchChromium } from "../helpers/browser.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { auditPage, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const BUYER = getAddress("0x00000000000000000000000000000000000b0b07");
const NOTE = "You paid 5.00 USDC more than asked. The merchant has been notified and can refund it.";
let chain: TestChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let producer: NodeJS.Timeout;
let email: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  const devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  email = (
    await createUser(
      app.db.prisma,
      app.merchant.merchant.id,
      { email: `overpaid-${randomBytes(4).toString("hex")}@shop.example`, password: PASSWORD },
      OPERATOR,
    )
  ).email;
  browser = await launchChromium();
}, 60_000);
afterEach(() => {
  expect(pageErrors).toEqual([]);
});
afterAll(async () => {
  clearInterval(producer);
  await browser?.close();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

const pageErrors: Error[] = [];
async function newPage(width = 1280): Promise<Page> {
  const page = await openPage(browser, { width });
  page.on("pageerror", (e) => pageErrors.push(e));
  return page;
}

describe("an overpaid charge", () => {
  let chargeId: string;

  it("the hosted page, open while the buyer pays 15 on a 10 charge, says what was paid too much and that the merchant was told", async () => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: `overpaid-${randomBytes(3).toString("hex")}`, amount: "10" } })).body;
    chargeId = charge.id;
    const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    const page = await newPage();
    await page.goto(`${app.url}/pay/${charge.id}`);
    const note = page.locator("#overpaid");
    expect(await note.isHidden()).toBe(true);
    await chain.pay(chain.wallet(2), picked.body.cloneAddress, 15_000_000n);
    // Live, without a reload: the script writes it from the session's amountOverpaid.
    await note.waitFor({ state: "visible", timeout: 60_000 });
    expect(await note.textContent()).toBe(NOTE);
    await auditPage(page, "pay-overpaid", 1280);
    // Drawn by the server too (a reload, or no JavaScript).
    await page.reload();
    expect(await page.locator("#overpaid").textContent()).toBe(NOTE);
    await page.context().close();
  });

  it("the dashboard shows the badge on the charge and in the list, and refunds exactly the excess", async () => {
    await waitFor("the charge paid out", async () => (await app.call("GET", `/v1/charges/${chargeId}`)).body.status === "COMPLETED", 60_000);
    const page = await newPage();
    await signInAs(page, app.url, email);
    await page.goto(`${app.url}/dashboard/charges`);
    const row = page.locator(`[data-charge="${chargeId}"]`);
    await expect.poll(() => row.locator("[data-overpaid]").textContent(), { timeout: 10_000 }).toBe("Overpaid 5.00");

    await page.goto(`${app.url}/dashboard/charges/${chargeId}`);
    const badge = page.getByRole("heading", { level: 1 }).locator("[data-overpaid]");
    await expect.poll(() => badge.textContent(), { timeout: 10_000 }).toBe("Overpaid 5.00");
    const offer = page.getByRole("button", { name: "Refund the excess (5.00 USDC)" });
    await offer.click();
    const amount = page.getByLabel("Amount (empty: all that is left)");
    expect(await amount.inputValue()).toBe("5.00");
    expect(await page.getByLabel("Reason").inputValue()).toBe("Overpaid");
    await auditPage(page, "dashboard-overpaid", 1280);
    await page.getByLabel("Buyer's address (empty: a claim link for the buyer)").fill(BUYER);
    await page.getByRole("button", { name: "Refund", exact: true }).click();
    await page.getByRole("button", { name: "Yes, refund 5.00 USDC" }).click();
    await expect.poll(() => page.locator("[data-refund]").count(), { timeout: 10_000 }).toBe(1);
    // Once refunding the excess, the offer is gone; the badge stays (it is what was paid).
    expect(await offer.count()).toBe(0);
    expect(await badge.textContent()).toBe("Overpaid 5.00");
    const refunds = (await app.call("GET", `/v1/refunds?chargeId=${chargeId}`)).body.data;
    expect(refunds).toEqual([expect.objectContaining({ amount: "5.00", reason: "Overpaid", address: BUYER })]);
    await page.context().close();
  });
});
