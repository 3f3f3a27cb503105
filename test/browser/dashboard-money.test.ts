// The dashboard's money views in a real browser (Debian's chromium through playwright-core) against
// the service on an anvil devnet with its chain runner: a charge paid, its fee and payout made by the
// relayer; the Balance page's figures per chain and in total as the ledger says, its rows filtered
// and paged with the URL surviving Back; the Payouts page listing the settlement with its transaction;
// CSV exports downloaded and parsed; Home's totals and chart (axes, two decimals) updating live when
// a charge completes; accessibility and screenshots at 1280 and 360 px.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
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
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const BUYER = getAddress("0x00000000000000000000000000000000000b0b05");
const BASE_SEPOLIA = 84532;
let chain: TestChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let producer: NodeJS.Timeout;
let email: string;
/** The charge paid on the devnet and paid out by the relayer. */
let paid: { id: string; payoutTx: string };

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  const devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  email = (
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: `money-${randomBytes(4).toString("hex")}@shop.example`, password: PASSWORD }, OPERATOR)
  ).email;
  browser = await launchChromium();

  // A charge paid on the devnet: its payment is confirmed, then the relayer pays it out (fee and net).
  const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "money-1", amount: "20" } })).body;
  const selected = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
  await chain.mint(chain.wallet(2).address, 20_000_000n);
  await chain.pay(chain.wallet(2), selected.body.cloneAddress, 20_000_000n);
  const settled = await waitFor(
    "the charge's payout",
    async () => {
      const body = (await app.call("GET", `/v1/charges/${charge.id}`)).body;
      return body.settlements.length === 1 && body;
    },
    90_000,
  );
  paid = { id: charge.id, payoutTx: settled.settlements[0].txHash };
}, 120_000);
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

/** Errors the pages threw: none may. */
const pageErrors: Error[] = [];

async function newPage(width = 1280): Promise<Page> {
  const page = await openPage(browser, { width, acceptDownloads: true });
  page.on("pageerror", (e) => pageErrors.push(e));
  return page;
}

const signIn = (page: Page) => signInAs(page, app.url, email);

/** Checks the page as it is at `width` (see auditPage). */
const audit = (page: Page, name: string, width: number) => auditPage(page, `dashboard-money-${name}`, width);

/** A decimal USDC string in base units, and back (as the API writes it: 2 to 6 decimals). */
const toUnits = (amount: string) => {
  const [whole = "0", frac = ""] = amount.replace(/^-/, "").split(".");
  const value = BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, "0"));
  return amount.startsWith("-") ? -value : value;
};
const fromUnits = (units: bigint) => `${units / 1_000_000n}.${(units % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0")}`;

/** Two decimals, as the money views show an amount (rounded to the cent, "≈" when that drops anything). */
function shown(amount: string): string {
  const units = toUnits(amount);
  const abs = units < 0n ? -units : units;
  const c = (abs + 5_000n) / 10_000n;
  const text = `${units < 0n && c !== 0n ? "-" : ""}${c / 100n}.${(c % 100n).toString().padStart(2, "0")} USDC`;
  return abs % 10_000n === 0n ? text : `≈ ${text}`;
}

/** An RFC 4180 CSV text as rows of fields (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") (row.push(field), (field = ""));
    else if (ch === "\r" && text[i + 1] === "\n") (row.push(field), rows.push(row), (row = []), (field = ""), i++);
    else field += ch;
  }
  return rows;
}

/** Clicks the export link named `name` and parses the file the browser downloads. */
async function download(page: Page, name: string): Promise<{ file: string; rows: string[][] }> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name, exact: true }).click()]);
  return { file: file.suggestedFilename(), rows: parseCsv(readFileSync((await file.path())!, "utf8")) };
}

const today = () => new Date().toISOString().slice(0, 10);

describe("the money views in a browser", () => {
  it("Balance shows the ledger's figures per chain and in total; Payouts lists the settlement with its transaction", async () => {
    // Money on a second chain too (made-up blocks, the ledger's own posting code): held there, nothing paid out.
    const sepolia = new ChainHistory(app, BASE_SEPOLIA);
    const held = await chargeOn(app, app.testKey, BASE_SEPOLIA, "5.00");
    await sepolia.sees({ from: BUYER, to: held.address, amount: "1.234567" });
    await sepolia.confirm(new Date());
    const balance = (await app.call("GET", "/v1/balance")).body;
    expect(balance.held).toContainEqual({ chainId: BASE_SEPOLIA, amount: "1.234567" });

    const page = await newPage();
    await signIn(page);
    await go(page, "Balance");
    await page.getByRole("heading", { level: 1, name: "Balance" }).waitFor();
    const table = page.locator("table[data-balance]");
    await table.waitFor();
    const cell = (chainId: number | "total", column: string) => table.locator(`tr[data-chain="${chainId}"] td[data-column="${column}"] .amount`);
    for (const [column, key] of [
      ["held", "held"],
      ["onItsWay", "onItsWay"],
      ["paidOut", "paidOut"],
      ["fees", "fees"],
      ["refunded", "refunded"],
    ] as const) {
      let total = 0n;
      for (const { chainId, amount } of balance[key] as { chainId: number; amount: string }[]) {
        expect(await cell(chainId, column).getAttribute("data-amount"), `${column} on ${chainId}`).toBe(amount);
        expect(await cell(chainId, column).textContent(), `${column} on ${chainId}`).toBe(shown(amount));
        total += toUnits(amount);
      }
      const totalText = await cell("total", column).textContent();
      expect(totalText, column).toMatch(/^(≈ )?\d+\.\d{2} USDC$/);
      expect(totalText, column).toBe(shown(fromUnits(total)));
    }
    expect(await cell(31337, "paidOut").textContent()).toBe("19.80 USDC");
    expect(await cell(31337, "fees").textContent()).toBe("0.20 USDC");
    expect(await cell(BASE_SEPOLIA, "held").textContent()).toBe("≈ 1.23 USDC");
    expect(await cell(BASE_SEPOLIA, "held").getAttribute("title")).toBe("Exactly 1.234567 USDC");
    expect(await table.locator(`tr[data-chain="${BASE_SEPOLIA}"] th`).textContent()).toBe("Base Sepolia");

    // The ledger's rows, as REST lists them.
    const ledger = (await app.call("GET", "/v1/balance_transactions?limit=100")).body.data as { id: string; type: string; amount: string; chargeId: string }[];
    await expect.poll(() => page.locator("tr[data-btx]").count()).toBe(ledger.length);
    expect(await page.locator("tr[data-btx]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-btx")))).toEqual(ledger.map((r) => r.id));
    const fee = ledger.find((r) => r.type === "fee")!;
    const feeRow = page.locator(`tr[data-btx="${fee.id}"]`);
    expect(await feeRow.locator(".amount").textContent()).toBe("-0.20 USDC");
    expect(await feeRow.getByRole("link", { name: paid.id }).getAttribute("href")).toBe(`/dashboard/charges/${paid.id}`);
    expect(await feeRow.textContent()).toContain(paid.payoutTx.slice(0, 10));
    await audit(page, "balance", 1280);

    await go(page, "Payouts");
    await page.getByRole("heading", { level: 1, name: "Payouts" }).waitFor();
    const payout = page.locator(`tr[data-payout="${paid.payoutTx}"]`);
    await payout.waitFor();
    expect(await page.locator("tr[data-payout]").count()).toBe(1);
    expect(await payout.locator('[data-column="amount"]').textContent()).toBe("19.80 USDC");
    expect(await payout.locator('[data-column="fee"]').textContent()).toBe("0.20 USDC");
    expect(await payout.locator(`[title="${paid.payoutTx}"]`).textContent()).toBe(`${paid.payoutTx.slice(0, 10)}…${paid.payoutTx.slice(-8)}`);
    expect(await payout.textContent()).toContain("Local devnet");
    expect(await payout.locator(".status").textContent()).toBe("PAID");
    await payout.getByRole("link", { name: paid.id }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain("money-1");
    await page.goBack();
    await payout.waitFor();
    await audit(page, "payouts", 1280);
    await page.context().close();
  });

  it("downloads the period's balance transactions and charges as CSV with the session, the rows the API has", async () => {
    const page = await newPage();
    await signIn(page);
    await go(page, "Balance");
    await page.getByRole("link", { name: "Balance transactions (CSV)", exact: true }).waitFor();
    const all = await download(page, "Balance transactions (CSV)");
    expect(all.file).toBe("balance_transactions_test.csv");
    const rest = (await app.call("GET", "/v1/balance_transactions?limit=100")).body.data as { id: string; type: string; amount: string }[];
    expect(all.rows[0]!.slice(0, 3)).toEqual(["id", "type", "amount"]);
    expect(all.rows.slice(1).map((r) => r[0])).toEqual(rest.map((r) => r.id));
    expect(all.rows.slice(1).map((r) => [r[1], r[2]])).toEqual(rest.map((r) => [r.type, r.amount]));

    // A period of today only: the form puts it in the URL, and the export links carry it.
    await page.getByLabel("From (UTC)").fill(today());
    await page.getByLabel("To (UTC, included)").fill(today());
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe(`?from=${today()}&to=${today()}`);
    const charges = await download(page, "Charges (CSV)");
    expect(charges.file).toBe("charges_test.csv");
    const header = charges.rows[0]!;
    expect(header.slice(0, 8)).toEqual(["id", "orderId", "status", "amount", "amountReceived", "amountRefunded", "feeAmount", "netAmount"]);
    const row = charges.rows.find((r) => r[0] === paid.id)!;
    const field = (name: string) => row[header.indexOf(name)];
    expect([field("orderId"), field("status"), field("amountReceived"), field("feeAmount"), field("netAmount")]).toEqual([
      "money-1",
      "COMPLETED",
      "20.00",
      "0.20",
      "19.80",
    ]);
    const restCharges = (await app.call("GET", `/v1/charges?limit=100&createdGte=${today()}T00:00:00Z`)).body.data as { id: string }[];
    expect(charges.rows.slice(1).map((r) => r[0])).toEqual(restCharges.map((c) => c.id));
    // An empty period downloads the header alone.
    await page.getByLabel("From (UTC)").fill("2020-01-01");
    await page.getByLabel("To (UTC, included)").fill("2020-01-02");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tr[data-btx]").count()).toBe(0);
    const none = await download(page, "Balance transactions (CSV)");
    expect(none.rows).toHaveLength(1);
    await page.context().close();
  });

  it("keeps the filters and the page in the URL: Back returns to each", async () => {
    // More rows than a page holds.
    const sepolia = new ChainHistory(app, BASE_SEPOLIA, true, 10_000n);
    const many = await chargeOn(app, app.testKey, BASE_SEPOLIA, "100.00");
    await sepolia.sees(...Array.from({ length: 30 }, () => ({ from: BUYER, to: many.address, amount: "0.01" })));
    await sepolia.confirm(new Date());
    const rows = (await app.call("GET", "/v1/balance_transactions?limit=100")).body.data as { id: string; type: string }[];
    expect(rows.length).toBeGreaterThan(25);

    const page = await newPage();
    await signIn(page);
    await go(page, "Balance");
    const ids = () => page.locator("tr[data-btx]").evaluateAll((trs) => trs.map((r) => r.getAttribute("data-btx")));
    await expect.poll(ids).toEqual(rows.slice(0, 25).map((r) => r.id));
    await page.getByRole("link", { name: "Older →" }).click();
    await expect.poll(ids).toEqual(rows.slice(25, 50).map((r) => r.id));
    expect(new URL(page.url()).searchParams.get("after")).toBe(rows[24]!.id);
    await page.getByRole("link", { name: "← Newer" }).click();
    await expect.poll(ids).toEqual(rows.slice(0, 25).map((r) => r.id));
    await page.goBack();
    await expect.poll(ids).toEqual(rows.slice(25, 50).map((r) => r.id));
    await page.goBack();
    await expect.poll(ids).toEqual(rows.slice(0, 25).map((r) => r.id));

    // A type filter, then a period on top of it; Back undoes one at a time, the form following.
    await page.getByLabel("Type").selectOption("FEE");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?type=FEE");
    await expect.poll(ids).toEqual(rows.filter((r) => r.type === "fee").map((r) => r.id));
    await page.getByLabel("From (UTC)").fill("2020-01-01");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?type=FEE&from=2020-01-01");
    await page.goBack();
    await expect.poll(() => new URL(page.url()).search).toBe("?type=FEE");
    expect(await page.getByLabel("From (UTC)").inputValue()).toBe("");
    expect(await page.getByLabel("Type").inputValue()).toBe("FEE");
    await expect.poll(ids).toEqual(rows.filter((r) => r.type === "fee").map((r) => r.id));
    // Into a charge and back: the filtered list again.
    await page.locator("tr[data-btx]").first().getByRole("link").first().click();
    await page.getByRole("heading", { level: 1 }).filter({ hasText: "money-1" }).waitFor();
    await page.goBack();
    await expect.poll(ids).toEqual(rows.filter((r) => r.type === "fee").map((r) => r.id));
    await page.goBack();
    await expect.poll(() => new URL(page.url()).search).toBe("");
    expect(await page.getByLabel("Type").inputValue()).toBe("");
    await expect.poll(ids).toEqual(rows.slice(0, 25).map((r) => r.id));
    await page.context().close();
  });

  it("Home shows the period's totals and a chart with labelled axes in two decimals, and follows a charge completing live", async () => {
    const page = await newPage();
    await signIn(page);
    await page.getByRole("heading", { level: 1, name: "Home" }).waitFor();
    const total = (key: string) => page.locator(`[data-total="${key}"] .amount`);
    const summary = async () => (await app.gql("{ ledgerSummary { grossReceived fees refunded net } }")).data.ledgerSummary;
    const before = await summary();
    for (const key of ["grossReceived", "fees", "refunded", "net"] as const) {
      await expect.poll(() => total(key).getAttribute("data-amount"), { message: key }).toBe(before[key]);
      expect(await total(key).textContent(), key).toBe(shown(before[key]));
    }
    expect(await page.getByText("protocol fees", { exact: false }).count()).toBe(0);

    const chart = page.getByRole("img", { name: /^Money received per day in USDC/ });
    expect(await chart.locator("text").first().textContent()).toBe("USDC");
    const yTicks = await chart.locator("[data-y-tick] text").allTextContents();
    expect(yTicks.length).toBeGreaterThanOrEqual(2);
    for (const t of yTicks) expect(t).toMatch(/^\d+\.\d{2}$/);
    expect(yTicks[0]).toBe("0.00");
    const top = yTicks.at(-1)!;
    const grossToday = (await app.gql("{ ledgerSummary { daily { day grossReceived } } }")).data.ledgerSummary.daily.at(-1).grossReceived;
    expect(Number(top)).toBeGreaterThanOrEqual(Number(grossToday));
    const xTicks = await chart.locator("[data-x-tick]").allTextContents();
    expect(xTicks.length).toBeGreaterThanOrEqual(3);
    for (const t of xTicks) expect(t).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
    expect(await chart.locator("rect.bar").count()).toBe(30);
    expect(await chart.locator(`rect[data-day="${today()}"] title`).textContent()).toBe(`${today()}: ${shown(grossToday).replace("≈ ", "")}`);
    await audit(page, "home", 1280);

    // A charge completes while the page is open: the totals and today's bar follow without reload.
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "money-live", amount: "1.005" } })).body;
    const selected = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    await chain.mint(chain.wallet(3).address, 1_005_000n);
    await chain.pay(chain.wallet(3), selected.body.cloneAddress, 1_005_000n);
    const expected = fromUnits(toUnits(before.grossReceived) + 1_005_000n);
    await expect.poll(() => total("grossReceived").getAttribute("data-amount"), { timeout: 60_000 }).toBe(expected);
    expect(await total("grossReceived").textContent()).toBe(shown(expected));
    // Its payout follows: the fees and the net too.
    await expect.poll(async () => (await app.call("GET", `/v1/charges/${charge.id}`)).body.status, { timeout: 60_000 }).toBe("COMPLETED");
    await expect.poll(async () => (await app.call("GET", `/v1/charges/${charge.id}`)).body.settlements.length, { timeout: 60_000 }).toBe(1);
    const after = await summary();
    expect(after.fees).not.toBe(before.fees);
    await expect.poll(() => total("fees").getAttribute("data-amount"), { timeout: 10_000 }).toBe(after.fees);
    await expect.poll(() => total("net").getAttribute("data-amount")).toBe(after.net);
    expect(await total("net").textContent()).toBe(shown(after.net));
    await page.context().close();
  });

  it("passes axe at 360 px on Home, Balance and Payouts", async () => {
    const page = await newPage(360);
    await signIn(page);
    for (const [link, name] of [
      ["Home", "home"],
      ["Balance", "balance"],
      ["Payouts", "payouts"],
    ] as const) {
      if (link !== "Home") await go(page, link);
      await page.getByRole("heading", { level: 1, name: link }).waitFor();
      await page.locator("main table, main figure").first().waitFor();
      await audit(page, name, 360);
    }
    await page.context().close();
  });
});
