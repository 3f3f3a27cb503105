// The dashboard's x402 page in a real browser (Debian's chromium through playwright-core) against the
// service on an anvil devnet: the x402 address and the facilitator's URL as GET /v1/x402 gives them
// (the address copied), the devnet's requirements (network, USDC, EIP-712 domain, minimum), the
// settlements newest first with their status, payer, resource and transaction, paged by cursor; the
// Balance page's x402 payment row naming what was paid for and linking to the page; and, instead of an
// address, what to do without a settlement wallet and on a service without a chain (no error shown,
// the list still there). Accessibility, no page errors, screenshots at 1280 and 360 px.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { newId } from "../../src/domain/ids.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const RUN = randomBytes(4).toString("hex");
const PAYER = "0x00000000000000000000000000000000000B0b05";
let chain: TestChain;
let app: TestApp;
let bare: TestApp;
let browser: Browser;
let email: string;
let bareEmail: string;
let x402: { payTo: string; facilitatorUrl: string; accepts: { network: string; asset: string; extra: { name: string; version: string }; minAmount: string }[] };
/** The three newest settlements: settled (in the ledger), failed, on its way. */
const ids = { settled: "", failed: "", relaying: "" };
/** Settlements in all: more than a page (25). */
const TOTAL = 28;
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  app = await startApp(POLLING, { chains: new ChainSet([await chain.enabled(1)]) });
  bare = await startApp(POLLING);
  const user = (prisma: TestApp["db"]["prisma"], merchant: string, name: string) =>
    createUser(prisma, merchant, { email: `${name}-${RUN}@shop.example`, password: PASSWORD }, OPERATOR).then((u) => u.email);
  email = await user(app.db.prisma, app.merchant.merchant.id, "x402");
  bareEmail = await user(bare.db.prisma, bare.merchant.merchant.id, "x402-bare");
  const got = await app.call("GET", "/v1/x402");
  expect(got.status, got.text).toBe(200);
  x402 = got.body;

  // Settlements as settle and the relayer store them, oldest first; the last three are the ones looked at.
  const merchantId = app.merchant.merchant.id;
  const anchor = await app.db.prisma.charge.findFirstOrThrow({ where: { merchantId, livemode: false, kind: "x402" } });
  const start = Date.now() - TOTAL * 60_000;
  const settlement = (i: number, fields: Record<string, unknown> = {}) => ({
    id: newId("x402pay"),
    merchantId,
    livemode: false,
    chargeId: anchor.id,
    chainId: 31337,
    fromAddress: PAYER,
    toAddress: x402.payTo,
    value: "10000",
    validAfter: "0",
    validBefore: "99999999999",
    nonce: `0x${i.toString(16).padStart(64, "0")}`,
    signature: `0x${"11".repeat(65)}`,
    resource: `https://api.example/old/${i}`,
    status: "SETTLED" as const,
    txHash: `0x${(i + 1).toString(16).padStart(64, "0")}`,
    createdAt: new Date(start + i * 60_000),
    ...fields,
  });
  await app.db.prisma.x402Payment.createMany({ data: Array.from({ length: TOTAL - 3 }, (_, i) => settlement(i)) });
  const weather = settlement(TOTAL - 3, {
    resource: "https://api.example/weather",
    description: "Today's weather",
    value: "12345",
    txHash: `0x${"ab".repeat(32)}`,
  });
  const failed = settlement(TOTAL - 2, {
    status: "FAILED",
    txHash: null,
    error: "The token refused it: insufficient funds",
    resource: "https://api.example/forecast",
  });
  const relaying = settlement(TOTAL - 1, { status: "RELAYING", txHash: null, resource: null });
  await app.db.prisma.x402Payment.createMany({ data: [weather, failed, relaying] });
  Object.assign(ids, { settled: weather.id, failed: failed.id, relaying: relaying.id });
  // The settled payment confirmed: its ledger row.
  await app.db.prisma.balanceTransaction.create({
    data: {
      id: newId("btx"),
      merchantId,
      livemode: false,
      type: "payment",
      amount: "12345",
      chargeId: anchor.id,
      chainId: 31337,
      txHash: weather.txHash!,
      blockNumber: 5n,
      x402PaymentId: weather.id,
    },
  });
  browser = await launchChromium();
}, 120_000);
afterEach(() => {
  expect(pageErrors).toEqual([]);
});
afterAll(async () => {
  await browser?.close();
  await bare?.stop();
  await app?.stop();
  await chain?.stop();
});

async function newPage(width = 1280): Promise<Page> {
  const page = await openPage(browser, { width });
  page.on("pageerror", (e) => pageErrors.push(`page error: ${e.message}`));
  return page;
}

const rows = (page: Page) => page.locator("tbody tr[data-x402-payment]");
const rowIds = (page: Page) => rows(page).evaluateAll((trs) => trs.map((r) => r.getAttribute("data-x402-payment")));

describe("the x402 page", () => {
  it("shows the x402 address and facilitator to copy, the devnet's requirements and the settlements, newest first, at 1280 and 360 px", async () => {
    for (const width of [1280, 360]) {
      const page = await newPage(width);
      await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
      await signInAs(page, app.url, email);
      await go(page, "x402");
      await page.getByRole("heading", { level: 1, name: "x402" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/dashboard/x402");
      const address = page.getByRole("region", { name: "Your x402 address" });
      await expect.poll(() => address.locator("[data-pay-to]").innerText()).toBe(x402.payTo);
      expect(new URL(await address.locator("[data-facilitator-url]").innerText(), app.url).href).toBe(new URL(x402.facilitatorUrl, app.url).href);
      expect(await address.innerText()).toMatch(/Selling an API with x402/);
      await address.getByRole("button", { name: "Copy address" }).click();
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(x402.payTo);

      // One row per chain of the mode: the devnet here.
      const accepts = page.getByRole("region", { name: "What a route may ask for" });
      const devnet = x402.accepts.find((a) => a.network === "eip155:31337")!;
      const row = accepts.locator('tr[data-network="eip155:31337"]');
      const text = await row.innerText();
      expect(text).toContain(devnet.network);
      expect(text).toContain(`${devnet.extra.name}, version ${devnet.extra.version}`);
      expect(text).toContain(`${devnet.minAmount} USDC`);
      expect(await row.locator(`[title="${devnet.asset}"]`).count()).toBe(1);

      // The settlements: the newest first, each with what it was for and how it went.
      const payments = page.getByRole("region", { name: "Payments" });
      await expect.poll(() => payments.innerText()).toMatch(new RegExp(`\\b${TOTAL} payments\\b`));
      expect((await rowIds(page)).slice(0, 3)).toEqual([ids.relaying, ids.failed, ids.settled]);
      expect(await rows(page).count()).toBe(25);
      const settled = await page.locator(`tr[data-x402-payment="${ids.settled}"]`).innerText();
      expect(settled).toMatch(/0\.012345 USDC/);
      expect(settled).toMatch(/https:\/\/api\.example\/weather/);
      expect(settled).toMatch(/Today's weather/);
      expect(settled).toMatch(/SETTLED/);
      expect(await page.locator(`tr[data-x402-payment="${ids.settled}"] [title="${PAYER}"]`).count()).toBe(1);
      expect(await page.locator(`tr[data-x402-payment="${ids.settled}"] [title="0x${"ab".repeat(32)}"]`).count()).toBe(1);
      const failed = await page.locator(`tr[data-x402-payment="${ids.failed}"]`).innerText();
      expect(failed).toMatch(/FAILED/);
      expect(failed).toMatch(/insufficient funds/);
      expect(await page.locator(`tr[data-x402-payment="${ids.relaying}"]`).innerText()).toMatch(/RELAYING/);
      expect(await page.locator("main [role=alert]").count()).toBe(0);
      await auditPage(page, "dashboard-x402", width);
      await page.context().close();
    }
  });

  it("pages the settlements by cursor in the URL: Older shows the rest, Newer and Back return", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email, { path: "/x402" });
    await expect.poll(() => rows(page).count()).toBe(25);
    const first = await rowIds(page);
    await page.getByRole("link", { name: "Older →" }).click();
    await expect.poll(() => rows(page).count()).toBe(TOTAL - 25);
    expect(new URL(page.url()).searchParams.get("after")).toBeTruthy();
    const older = await rowIds(page);
    expect(older.filter((id) => first.includes(id))).toEqual([]);
    await page.getByRole("link", { name: "← Newer" }).click();
    await expect.poll(() => rowIds(page)).toEqual(first);
    await page.goBack();
    await expect.poll(() => rowIds(page)).toEqual(older);
    await page.context().close();
  });

  it("Balance names an x402 payment's resource and payer and links to the x402 page instead of a charge", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    await go(page, "Balance");
    const row = page.locator("tr[data-btx]", { hasText: "x402 payment" });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.innerText()).toMatch(/https:\/\/api\.example\/weather/);
    expect(await row.locator(`[title="${PAYER}"]`).count()).toBe(1);
    expect(await row.locator('a[href*="/charges/"]').count()).toBe(0);
    await row.getByRole("link", { name: "x402 payment" }).click();
    await page.getByRole("heading", { level: 1, name: "x402" }).waitFor();
    await page.context().close();
  });

  it("without a settlement wallet for the mode, says to set one in Settings instead of an address, and still lists the settlements", async () => {
    const merchant = app.merchant.merchant.id;
    await app.db.prisma.merchant.update({ where: { id: merchant }, data: { testWallet: null } });
    try {
      const page = await newPage(360);
      await signInAs(page, app.url, email, { path: "/x402" });
      const note = page.locator('[data-x402-missing="wallet"]');
      await note.waitFor();
      expect(await note.innerText()).toMatch(/test settlement wallet/);
      await expect.poll(() => rows(page).count()).toBe(25);
      expect(await page.locator("[data-pay-to]").count()).toBe(0);
      expect(await page.locator("main [role=alert]").count()).toBe(0);
      await auditPage(page, "dashboard-x402-no-wallet", 360);
      await note.getByRole("link", { name: "Settings" }).click();
      await page.getByLabel("Test settlement wallet").waitFor();
      await page.context().close();
    } finally {
      await app.db.prisma.merchant.update({ where: { id: merchant }, data: { testWallet: WALLET } });
    }
  });

  it("on a service without a chain, says so instead of an address, with an empty list", async () => {
    const page = await newPage();
    await signInAs(page, bare.url, bareEmail, { path: "/x402" });
    await page.locator('[data-x402-missing="chain"]').waitFor();
    const payments = page.getByRole("region", { name: "Payments" });
    await expect.poll(() => payments.innerText()).toMatch(/No x402 payments yet/);
    expect(await payments.innerText()).toMatch(/\b0 payments\b/);
    expect(await page.locator("main [role=alert]").count()).toBe(0);
    await auditPage(page, "dashboard-x402-no-chain", 1280);
    await page.context().close();
  });
});
