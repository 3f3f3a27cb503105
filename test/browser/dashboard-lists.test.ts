// The dashboard's lists and details in a real browser (Debian's chromium through playwright-core)
// against the service on an anvil devnet with its chain runner: charges partly paid, partly refunded
// and needing review marked as such in the list and on the customer's page; search by a hash as the
// dashboard shortens it and by email; filters, search and "Show more" kept in the URL through reload
// and Back; a charge's description, metadata and refunds on its page, with Cancel and Refund asking
// first, naming what they do; the event log filtered and an event's payload opened and copied; a
// charge's page following its payment and refunds live, its refund form held to amountRefundable.
// Accessibility and screenshots at 1280 and 360 px.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { launchChromium } from "../helpers/browser.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// Emails of this run only: on Redis the sign-in counters outlive a run, and CI runs follow each other.
const RUN = randomBytes(4).toString("hex");
const BUYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
let chain: TestChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let producer: NodeJS.Timeout;
let email: string;
// The charges every test looks at: made and paid once, below.
let partlyPaid: { id: string; customerId: string };
let partlyRefunded: { id: string; payTx: string };
let flagged: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  const devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  email = (await createUser(app.db.prisma, app.merchant.merchant.id, { email: `lists-${RUN}@shop.example`, password: PASSWORD }, OPERATOR)).email;
  browser = await launchChromium();

  // Partly paid: 4 of 10 USDC, for a customer.
  const customer = (await app.call("POST", "/v1/customers", { body: { email: `Carla.${RUN}@Buyer.example`, name: "Carla Buyer" } })).body;
  const half = (await app.call("POST", "/v1/charges", { body: { orderId: `lists-partly-paid-${RUN}`, amount: "10", customerId: customer.id } })).body;
  const halfPick = await app.call("POST", `/v1/public/charges/${half.id}/chain`, { key: null, body: { chainId: 31337 } });
  await chain.pay(chain.wallet(2), halfPick.body.cloneAddress, 4_000_000n);
  partlyPaid = { id: half.id, customerId: customer.id };

  // Partly refunded: 5 USDC paid, 1.50 paid back by the merchant's wallet; with a description and metadata.
  const full = (
    await app.call("POST", "/v1/charges", {
      body: { orderId: `lists-refunded-${RUN}`, amount: "5", description: "Two blue mugs", metadata: { sku: "MUG-BLUE", batch: "7" } },
    })
  ).body;
  const fullPick = await app.call("POST", `/v1/public/charges/${full.id}/chain`, { key: null, body: { chainId: 31337 } });
  const payTx = await chain.pay(chain.wallet(2), fullPick.body.cloneAddress, 5_000_000n);
  await expectStatus(half.id, "amountReceived", "4.00");
  await expectStatus(full.id, "status", "COMPLETED");
  await app.call("POST", `/v1/charges/${full.id}/refunds`, { body: { amount: "1.5", address: BUYER } });
  await chain.pay(chain.wallet(1), BUYER, 1_500_000n);
  await expectStatus(full.id, "amountRefunded", "1.50");
  partlyRefunded = { id: full.id, payTx };

  // Needs review (as the reconciliation flags it).
  flagged = (await app.call("POST", "/v1/charges", { body: { orderId: `lists-review-${RUN}`, amount: "2" } })).body.id;
  await app.db.prisma.charge.update({
    where: { id: flagged },
    data: { reviewReason: "The chain shows 1.00 USDC less than the ledger.", reviewAt: new Date() },
  });
}, 120_000);
afterAll(async () => {
  clearInterval(producer);
  await browser?.close();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

/** Waits until the charge's `field` reads `value` over the API (usable outside a test too). */
async function expectStatus(id: string, field: string, value: string): Promise<void> {
  await waitFor(`${id} ${field} ${value}`, async () => (await app.call("GET", `/v1/charges/${id}`)).body[field] === value, 60_000);
}

/** Errors each page logged (besides failed requests, such as the session check before sign-in): `audit` expects none. */
const logged = new WeakMap<Page, string[]>();

async function newPage(width = 1280): Promise<Page> {
  const page = await openPage(browser, { width });
  const errors: string[] = [];
  logged.set(page, errors);
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && !m.text().startsWith("Failed to load resource") && errors.push(m.text()));
  return page;
}

const signIn = (page: Page) => signInAs(page, app.url, email);

/** Checks the page as it is at `width` (see auditPage), and that it logged no error. */
async function audit(page: Page, name: string, width: number): Promise<void> {
  await auditPage(page, `dashboard-lists-${name}`, width);
  expect(logged.get(page), `${name} at ${width}`).toEqual([]);
}

const rowOf = (page: Page, id: string) => page.locator(`tr[data-charge="${id}"]`);
const badge = (page: Page, id: string) => rowOf(page, id).locator("[data-display-status]");
const shownIds = (page: Page) => page.locator("tbody tr[data-charge]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-charge")));

describe("the dashboard's lists and details", () => {
  it("marks partly paid, partly refunded and flagged charges in the list and on the customer's page", async () => {
    const page = await newPage();
    await signIn(page);
    await go(page, "Charges");
    await expect.poll(() => badge(page, partlyPaid.id).textContent(), { timeout: 10_000 }).toBe("PARTLY PAID");
    expect(await badge(page, partlyRefunded.id).textContent()).toBe("PARTLY REFUNDED");
    expect(await rowOf(page, flagged).locator(".status").allTextContents()).toEqual(["PENDING", "Needs review"]);
    await audit(page, "charges", 1280);
    await page.goto(`${app.url}/dashboard/customers/${partlyPaid.customerId}`);
    await expect.poll(() => page.locator(`li[data-charge="${partlyPaid.id}"] [data-display-status]`).textContent(), { timeout: 10_000 }).toBe("PARTLY PAID");
    await page.context().close();

    const narrow = await newPage(360);
    await signIn(narrow);
    await go(narrow, "Charges");
    await badge(narrow, partlyRefunded.id).waitFor();
    await audit(narrow, "charges", 360);
    await narrow.context().close();
  });

  it("finds a charge by its payment's hash as the page shortens it and by the start of an email; filters and Show more live in the URL through reload and Back", async () => {
    for (let i = 0; i < 27; i++) await app.call("POST", "/v1/charges", { body: { orderId: `bulk-${RUN}-${String(i).padStart(2, "0")}`, amount: "1" } });
    const page = await newPage();
    await signIn(page);
    await go(page, "Charges");
    // The hash exactly as the charge's page shows it.
    await page.goto(`${app.url}/dashboard/charges/${partlyRefunded.id}`);
    const shortened = (await page.getByRole("region", { name: "Payments" }).locator(`[title="${partlyRefunded.payTx}"]`).textContent())!;
    expect(shortened).toMatch(/^0x[0-9a-f]{8}…[0-9a-f]{8}$/);
    await go(page, "Charges");
    await page.getByRole("searchbox").fill(shortened);
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => shownIds(page)).toEqual([partlyRefunded.id]);
    expect(new URL(page.url()).searchParams.get("q")).toBe(shortened);

    await page.getByRole("searchbox").fill(`carla.${RUN}`.toUpperCase());
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => shownIds(page)).toEqual([partlyPaid.id]);
    // Back: the previous search, in the box and the list.
    await page.goBack();
    await expect.poll(() => shownIds(page)).toEqual([partlyRefunded.id]);
    expect(await page.getByRole("searchbox").inputValue()).toBe(shortened);

    // A search and a status, then Show more: all survive a reload, and Back from a charge's page.
    await page.getByRole("searchbox").fill(`bulk-${RUN}`);
    await page.getByLabel("Status").selectOption("PENDING");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(25);
    await page.getByRole("button", { name: "Show more" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(27);
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: `bulk-${RUN}`, status: "PENDING", shown: "50" });
    await page.reload();
    await expect.poll(() => page.locator("tbody tr").count(), { timeout: 10_000 }).toBe(27);
    expect(await page.getByLabel("Status").inputValue()).toBe("PENDING");
    await page.locator("tbody tr").last().getByRole("link").click();
    await page.getByRole("region", { name: "Charge" }).waitFor();
    await page.goBack();
    await expect.poll(() => page.locator("tbody tr").count(), { timeout: 10_000 }).toBe(27);
    expect(await page.getByRole("searchbox").inputValue()).toBe(`bulk-${RUN}`);

    // The review view is in the URL too.
    await page.getByRole("button", { name: /^Needs review/ }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("review")).toBe("1");
    await page.reload();
    await expect.poll(() => page.getByRole("button", { name: /^Needs review/ }).getAttribute("aria-pressed")).toBe("true");
    await page.context().close();
  });

  it("shows a charge's description, metadata and refunds in its timeline; Cancel and Refund ask first, naming what they do", async () => {
    const [paidRefund] = (await app.call("GET", `/v1/refunds?chargeId=${partlyRefunded.id}`)).body.data;
    expect(paidRefund).toMatchObject({ status: "COMPLETED", txHash: expect.stringMatching(/^0x/) });
    for (const width of [1280, 360]) {
      const page = await newPage(width);
      await signIn(page);
      await page.goto(`${app.url}/dashboard/charges/${partlyRefunded.id}`);
      await expect.poll(() => page.locator("[data-description]").textContent(), { timeout: 10_000 }).toBe("Two blue mugs");
      expect(await page.locator("[data-metadata]").allTextContents()).toEqual(["batch7", "skuMUG-BLUE"]);
      // The first refund, paid: its status, amount, address and transaction.
      const refund = page.locator("[data-timeline-refund]").first();
      await expect.poll(() => refund.locator(".status").textContent()).toBe("COMPLETED");
      expect(await refund.textContent()).toMatch(/^Refund 1\.50 USDC to 0x3C44CdDd…/);
      expect(await refund.locator(`[title="${paidRefund.txHash}"]`).count()).toBe(1);
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(`lists-refunded-${RUN} PARTLY REFUNDED`);

      // A refund asks first, naming the amount and where it goes.
      await page.getByLabel("Amount (empty: all that is left)").fill("1");
      await page.getByLabel("Buyer's address (empty: a claim link for the buyer)").fill(BUYER);
      await page.getByRole("button", { name: "Refund", exact: true }).click();
      const question = page.getByRole("group", { name: `Refund 1 USDC on Local devnet to ${BUYER}? Your settlement wallet pays it.` });
      await question.waitFor();
      await audit(page, "charge-refund-question", width);
      if (width === 360) {
        await question.getByRole("button", { name: "Keep it" }).click();
        expect(await question.count()).toBe(0);
      } else {
        await question.getByRole("button", { name: "Yes, refund 1 USDC" }).click();
        await expect.poll(() => page.locator("[data-refund]").count(), { timeout: 10_000 }).toBe(2);
      }
      await page.context().close();
    }
    expect((await app.call("GET", `/v1/refunds?chargeId=${partlyRefunded.id}`)).body.data).toHaveLength(2);

    // Cancel names the order and the amount; Keep it keeps it, the confirming button cancels.
    const orderId = `lists-cancel-${RUN}`;
    const pending = (await app.call("POST", "/v1/charges", { body: { orderId, amount: "7.25" } })).body;
    const page = await newPage();
    await signIn(page);
    await page.goto(`${app.url}/dashboard/charges/${pending.id}`);
    await page.getByRole("button", { name: "Cancel charge" }).click();
    const cancel = page.getByRole("group", { name: `Cancel the charge for order ${orderId} (7.25 USDC)? The buyer can no longer pay it.` });
    await cancel.getByRole("button", { name: "Keep it" }).click();
    expect((await app.call("GET", `/v1/charges/${pending.id}`)).body.status).toBe("PENDING");
    await page.getByRole("button", { name: "Cancel charge" }).click();
    await audit(page, "charge-cancel-question", 1280);
    await cancel.getByRole("button", { name: "Yes, cancel it" }).click();
    await expectStatus(pending.id, "status", "CANCELLED");
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toBe(`${orderId} CANCELLED`);
    await page.context().close();
  });

  it("lists events filtered by object and type in the URL, and opens one's payload to copy", async () => {
    for (const width of [1280, 360]) {
      const page = await newPage(width);
      await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
      await signIn(page);
      await go(page, "Events");
      await page.getByRole("heading", { level: 1, name: "Events" }).waitFor();
      await page.getByLabel("Object id").fill(partlyRefunded.id);
      await page.getByRole("button", { name: "Filter" }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get("objectId")).toBe(partlyRefunded.id);
      const types = () => page.locator("tbody tr[data-event] td:first-child a").allTextContents();
      await expect.poll(types, { timeout: 10_000 }).toContain("charge.completed");
      expect((await types()).every((t) => t.startsWith("charge."))).toBe(true);
      expect(await types()).toEqual(expect.arrayContaining(["charge.pending", "charge.chain_selected", "charge.received", "charge.completed"]));
      await audit(page, "events", width);

      // Open charge.completed: its payload is the charge, pretty-printed, and copies whole.
      await page.getByRole("link", { name: "charge.completed", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "charge.completed" }).waitFor();
      const payload = (await page.locator("[data-payload]").textContent())!;
      expect(JSON.parse(payload)).toMatchObject({ id: partlyRefunded.id, object: "charge", status: "COMPLETED", amount: "5.00" });
      expect(payload).toContain(`\n  "id": "${partlyRefunded.id}",`);
      await page.getByRole("button", { name: "Copy payload" }).click();
      await expect.poll(() => page.getByRole("status").filter({ hasText: "Copied." }).count()).toBe(1);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(payload);
      await audit(page, "event", width);

      // Back: the filtered list; then by kind of object, and by type.
      await page.goBack();
      await expect.poll(types, { timeout: 10_000 }).toContain("charge.completed");
      expect(await page.getByLabel("Object id").inputValue()).toBe(partlyRefunded.id);
      await page.getByLabel("Object id").fill("");
      await page.getByLabel("Kind of object").selectOption("REFUND");
      await page.getByRole("button", { name: "Filter" }).click();
      await expect.poll(async () => [...new Set((await types()).map((t) => t.split(".")[0]))], { timeout: 10_000 }).toEqual(["refund"]);
      await page.getByLabel("Kind of object").selectOption("");
      await page.getByLabel("Type").fill("customer.created");
      await page.getByRole("button", { name: "Filter" }).click();
      await expect.poll(async () => [...new Set(await types())], { timeout: 10_000 }).toEqual(["customer.created"]);
      await page.context().close();
    }
  });

  // Last: its charge and refunds would change the counts the tests above expect.
  it("follows a charge live: its payment, and refunds made and cancelled through the API, without reload; the refund form's limit is the server's amountRefundable", async () => {
    const made = (await app.call("POST", "/v1/charges", { body: { orderId: `lists-live-${RUN}`, amount: "3" } })).body;
    const picked = await app.call("POST", `/v1/public/charges/${made.id}/chain`, { key: null, body: { chainId: 31337 } });
    const page = await newPage();
    await signIn(page);
    await page.goto(`${app.url}/dashboard/charges/${made.id}`);
    await page.getByRole("region", { name: "Charge" }).waitFor();
    // Anything that reloads the page forgets this.
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
    expect(await page.getByRole("region", { name: "Refunds" }).count()).toBe(0);

    await chain.pay(chain.wallet(2), picked.body.cloneAddress, 3_000_000n);
    const refundable = page.locator("[data-amount-refundable]");
    await expect.poll(() => refundable.textContent(), { timeout: 30_000 }).toBe("3.00");
    expect(await page.getByRole("region", { name: "Payments" }).textContent()).toContain("3.00 USDC");

    // More than amountRefundable is refused beside the form, naming the field; nothing is asked.
    const amount = page.getByLabel("Amount (empty: all that is left)");
    await amount.fill("3.01");
    await page.getByRole("button", { name: "Refund", exact: true }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Amount: at most 3.00 USDC is left to refund.");
    expect(await page.getByRole("group", { name: /^Refund / }).count()).toBe(0);

    // A refund made through the API shows, and lowers the limit, without reload.
    const refund = (await app.call("POST", `/v1/charges/${made.id}/refunds`, { body: { amount: "1.25", address: BUYER } })).body;
    const row = page.locator(`[data-refund="${refund.id}"]`);
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 10_000 }).toBe("AWAITING_PAYMENT");
    await expect.poll(() => refundable.textContent(), { timeout: 10_000 }).toBe("1.75");
    expect(await page.locator(`[data-timeline-refund="${refund.id}"]`).count()).toBe(1);
    await amount.fill("1.76");
    await page.getByRole("button", { name: "Refund", exact: true }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Amount: at most 1.75 USDC is left to refund.");

    // Cancelled through the API: the page says so and gives the amount back.
    expect((await app.call("POST", `/v1/refunds/${refund.id}/cancel`)).status).toBe(200);
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 10_000 }).toBe("CANCELLED");
    await expect.poll(() => refundable.textContent(), { timeout: 10_000 }).toBe("3.00");
    expect((await app.gql("query($id: ID!) { charge(id: $id) { amountRefundable } }", { id: made.id })).data.charge.amountRefundable).toBe("3.00");
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    await page.context().close();
  });
});
