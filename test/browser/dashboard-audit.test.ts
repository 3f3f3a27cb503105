// Every page of the dashboard in a real browser (Debian's chromium through playwright-core), as an owner
// with some of everything (a customer, charges, invoices, a payment link, a plan, a test webhook's
// event): a crawl from Home that follows every internal link and finds each a real page, and axe on
// each page reached (detail pages and forms too) at 1280 and 360 px with no critical or serious
// finding and nothing scrolling sideways; /docs likewise. Then the slips of issue 45: the country
// picker saves DE for Germany; irreversible actions ask first, saying their consequence; messages
// name fields by their labels, not as the API spells them; a past due date is refused.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const RUN = randomBytes(4).toString("hex");
const mail = (name: string) => `${name}-${RUN}@shop.example`;
const LINES = [{ description: "Consulting", quantity: 2, unitAmount: "40.00" }];
let app: TestApp;
let browser: Browser;
let receiver: Receiver;
let email: string;
let customer: { id: string; name: string; email: string };
let draftId: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  app = await startApp({ ...POLLING, RATE_LIMIT_LIST: "100000" });
  receiver = await startReceiver();
  email = (await createUser(app.db.prisma, app.merchant.merchant.id, { email: mail("owner"), password: PASSWORD }, OPERATOR)).email;
  browser = await launchChromium();
  const post = async (path: string, body: unknown) => {
    const res = await app.call("POST", path, { body });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201);
    return res.body;
  };
  customer = await post("/v1/customers", {
    email: mail("carla"),
    name: "Carla Buyer",
    address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
  });
  await post("/v1/charges", { orderId: `audit-${RUN}`, amount: "12.50", customerId: customer.id, description: "Two mugs", metadata: { sku: "MUG" } });
  draftId = (await post("/v1/invoices", { customerId: customer.id, lineItems: LINES, dueDate: "2099-12-31" })).id;
  const open = (await post("/v1/invoices", { customerId: customer.id, lineItems: LINES, memo: "Net 30" })).id;
  expect((await app.call("POST", `/v1/invoices/${open}/finalize`)).status).toBe(200);
  await post("/v1/payment_links", { name: "Coffee beans", amount: "24.00" });
  await post("/v1/plans", { name: "Monthly box", amount: "30.00", interval: "month" });
  await post("/v1/webhook_endpoints", { url: receiver.url });
  await post("/v1/webhooks/test", { type: "charge.completed" });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await app?.stop();
});

/** Errors each page logged (besides failed requests, such as the session check before sign-in). */
const logged = new WeakMap<Page, string[]>();

async function newPage(width = 1280): Promise<Page> {
  const page = await openPage(browser, { width });
  const errors: string[] = [];
  logged.set(page, errors);
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && !m.text().startsWith("Failed to load resource") && errors.push(m.text()));
  return page;
}

/** Waits until the page shows what it loads (no "Loading…" left in it). */
async function loaded(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await expect.poll(() => page.locator("main").innerText(), { timeout: 10_000 }).not.toMatch(/Loading…/);
}

/** A page's name in the screenshots: its path, flattened. */
const fileOf = (path: string) => `dashboard-audit${path.replace(/^\/dashboard/, "").replace(/[^a-z0-9]+/gi, "-") || "-home"}`.replace(/-+$/, "");

/** A path's kind, so that each kind of page is audited once (the first charge's page stands for every charge's). */
const kindOf = (path: string) => path.replace(/\/(chrg|cus|inv|plink|evt|sub|eml|plan)_[A-Za-z0-9]+/g, "/$1_…").replace(/\?.*$/, "?…");

describe("every page of the dashboard", () => {
  it("every internal link from Home leads to a real page, and each kind of page passes axe at 1280 and 360 px without scrolling sideways", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    const queue = ["/dashboard"];
    const seen = new Set(queue);
    const audited = new Set<string>();
    const outside = new Set<string>();
    while (queue.length > 0) {
      const path = queue.shift()!;
      await page.goto(`${app.url}${path}`);
      await loaded(page);
      const main = await page.locator("main").innerText();
      expect(main, path).not.toMatch(/No such page/);
      expect(await page.locator("main [role=alert]").allInnerTexts(), path).toEqual([]);
      for (const href of await page.locator("a[href]").evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href))) {
        const url = new URL(href);
        if (url.origin !== app.url) continue;
        const next = url.pathname + url.search;
        // Exports (…​.csv) are files, not pages: fetched below with the other links that leave the dashboard.
        if (url.pathname.startsWith("/dashboard") && !url.pathname.endsWith(".csv")) {
          if (!seen.has(next)) {
            seen.add(next);
            queue.push(next);
          }
        } else outside.add(next);
      }
      if (audited.has(kindOf(path))) continue;
      audited.add(kindOf(path));
      for (const width of [1280, 360]) await auditPage(page, fileOf(path), width, { resize: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    // Every page of the navigation, and a page of each record made above.
    for (const kind of [
      "/dashboard/charges/chrg_…",
      "/dashboard/customers/cus_…",
      "/dashboard/invoices/inv_…",
      "/dashboard/payment-links/plink_…",
      "/dashboard/events/evt_…",
    ]) {
      expect([...audited], kind).toContain(kind);
    }
    expect(audited.size).toBeGreaterThan(15);
    // Links out of the dashboard on this origin (hosted pages, PDFs, the API reference) answer too.
    for (const path of outside) expect((await page.request.get(`${app.url}${path}`)).status(), path).toBeLessThan(400);
    expect(logged.get(page)).toEqual([]);
    await page.context().close();
  });

  it("passes axe with the forms and confirmations open, at 1280 and 360 px", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    const both = async (name: string) => {
      for (const width of [1280, 360]) await auditPage(page, `dashboard-audit-${name}`, width, { resize: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    };
    await go(page, "Customers");
    await page.getByRole("button", { name: "New customer" }).click();
    await both("new-customer");
    await page.goto(`${app.url}/dashboard/invoices/${draftId}`);
    await page.getByRole("button", { name: "Finalize" }).click();
    await both("finalize-question");
    await page.getByRole("button", { name: "Keep it" }).click();
    await page.getByRole("button", { name: "Edit" }).click();
    await both("invoice-edit");
    await go(page, "Developers");
    await page.getByRole("heading", { level: 1, name: "Developers" }).waitFor();
    await page.getByRole("button", { name: "Delete" }).first().click();
    await both("developers-delete-question");
    await go(page, "Plans");
    await page.getByRole("button", { name: "Retire" }).click();
    await both("plans-retire-question");
    expect(logged.get(page)).toEqual([]);
    await page.context().close();
  });

  it("/docs has no critical or serious axe finding and does not scroll sideways, closed and with an operation open", async () => {
    const page = await newPage();
    await page.goto(`${app.url}/docs`);
    await page.getByText("Create a charge (a payment request)").waitFor();
    await auditPage(page, "docs", 1280);
    await auditPage(page, "docs", 360, { resize: true });
    await page.getByText("Create a charge (a payment request)").click();
    await page.getByText("duplicate_order_id").first().waitFor();
    await auditPage(page, "docs-operation", 360);
    await auditPage(page, "docs-operation", 1280, { resize: true });
    await page.context().close();
  });
});

describe("the slips", () => {
  it("a test webhook's event names its sample object without a link to a page that does not exist", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    await go(page, "Developers");
    await page.getByRole("button", { name: "Send test event (charge.completed)" }).click();
    await go(page, "Events");
    const row = page.locator("tr[data-event]").first();
    await expect.poll(() => row.innerText()).toMatch(/charge\.completed/);
    await expect.poll(() => row.innerText()).toMatch(/a test webhook's sample: not a stored record/);
    expect(await row.locator('a[href*="/charges/"]').count()).toBe(0);
    await row.getByRole("link", { name: "charge.completed" }).click();
    await page.getByRole("heading", { level: 1, name: "charge.completed" }).waitFor();
    await expect.poll(() => page.getByRole("region", { name: "Event" }).innerText()).toMatch(/a test webhook's sample: not a stored record/);
    expect(await page.getByRole("region", { name: "Event" }).locator('a[href*="/charges/"]').count()).toBe(0);
    // A real charge's event links to the charge.
    await go(page, "Events");
    const real = page.locator("tr[data-event]", { hasText: "charge.pending" }).first();
    await real.locator('a[href*="/dashboard/charges/chrg_"]').click();
    await page.getByRole("region", { name: "Charge" }).waitFor();
    await page.context().close();
  });

  it("picks the country by its name and saves its code: Germany is DE, never GE", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    await go(page, "Customers");
    await page.getByRole("button", { name: "New customer" }).click();
    const form = page.getByRole("region", { name: "New customer" });
    await form.getByLabel("Name", { exact: true }).fill("Greta Picker");
    await form.getByLabel("Email", { exact: true }).fill(mail("greta"));
    const country = form.getByLabel("Country");
    expect(await country.evaluate((e) => e.tagName)).toBe("SELECT");
    await expect.poll(() => country.locator("option").count()).toBe(250);
    expect(await country.locator("option", { hasText: /^Georgia$/ }).getAttribute("value")).toBe("GE");
    await country.selectOption({ label: "Germany" });
    await form.getByRole("button", { name: "Create customer" }).click();
    await page.getByRole("heading", { level: 1, name: "Greta Picker" }).waitFor();
    const id = page.url().split("/").pop()!;
    expect((await app.call("GET", `/v1/customers/${id}`)).body.address).toMatchObject({ country: "DE" });
    // The customer's page shows the name chosen, and keeps it when the address is saved again.
    const address = page.getByRole("region", { name: "Address", exact: true });
    expect(await address.getByLabel("Country").evaluate((e) => (e as HTMLSelectElement).selectedOptions[0]?.textContent)).toBe("Germany");
    await address.getByLabel("City", { exact: true }).fill("Bonn");
    await address.getByRole("button", { name: "Save address" }).click();
    await address.getByText("Address saved.").waitFor();
    expect((await app.call("GET", `/v1/customers/${id}`)).body.address).toMatchObject({ city: "Bonn", country: "DE" });
    await page.context().close();
  });

  it("asks before what cannot be undone, saying what follows: finalize, void (and money received), deactivate, delete, cancel", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    const question = () => page.locator(".confirm > span").first().innerText();

    // Finalize: "Keep it" changes nothing; "Yes" issues it.
    await page.goto(`${app.url}/dashboard/invoices/${draftId}`);
    await page.getByRole("button", { name: "Finalize" }).click();
    expect(await question()).toMatch(/^Finalize this draft of 80\.00 USDC\? You can no longer edit or delete it: it gets the next invoice number/);
    await page.getByRole("button", { name: "Keep it" }).click();
    expect((await app.call("GET", `/v1/invoices/${draftId}`)).body.status).toBe("DRAFT");
    await page.getByRole("button", { name: "Finalize" }).click();
    await page.getByRole("button", { name: "Yes, finalize it" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/^INV-\d{6} OPEN$/);

    // Void with nothing received says so; with money paid on it, voiding is not offered and the page says why.
    await page.getByRole("button", { name: "Void", exact: true }).click();
    expect(await question()).toMatch(
      /This cannot be undone: it can no longer be paid, and a charge waiting for payment is cancelled\. No money was received on it\.$/,
    );
    await page.getByRole("button", { name: "Keep it" }).click();
    await app.db.prisma.invoice.update({ where: { id: draftId }, data: { amountPaid: 30_000_000 } });
    await page.reload();
    await page.locator("[data-no-void]").waitFor();
    expect(await page.locator("[data-no-void]").innerText()).toMatch(
      /^30\.00 USDC was paid on it, so it cannot be voided \(voiding would not give that money back\)/,
    );
    expect(await page.getByRole("button", { name: "Void", exact: true }).count()).toBe(0);

    // Deactivating a link, deleting a customer, cancelling a charge: each asks, naming what follows.
    await go(page, "Payment links");
    await page.getByRole("button", { name: "Deactivate" }).first().click();
    expect(await question()).toMatch(/^Deactivate Coffee beans\? Its page stops taking payments/);
    await page.getByRole("button", { name: "Keep it" }).click();
    await page.goto(`${app.url}/dashboard/customers/${customer.id}`);
    await page.getByRole("button", { name: "Delete customer" }).click();
    expect(await question()).toMatch(/This cannot be undone/);
    await page.getByRole("button", { name: "Keep it" }).click();
    await go(page, "Charges");
    await page.locator("tr[data-charge] a").first().click();
    await page.getByRole("button", { name: "Cancel charge" }).click();
    expect(await question()).toMatch(/^Cancel/);
    await page.getByRole("button", { name: "Keep it" }).click();
    await go(page, "Settings");
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    expect(await question()).toMatch(/Every session of yours ends, this one included/);
    await page.getByRole("button", { name: "Keep it" }).click();
    await page.context().close();
  });

  it("names fields by their labels in its messages, beside the field, never as the API spells them; a past due date is refused", async () => {
    const page = await newPage();
    await signInAs(page, app.url, email);
    await go(page, "Settings");
    const business = page.getByRole("region", { name: "Business" });
    await business.getByLabel("Test settlement wallet").fill("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
    await business.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByLabel("Your password").fill("not the password");
    await page.getByRole("button", { name: "Yes, change it" }).click();
    const alert = business.getByRole("alert");
    await expect.poll(() => alert.innerText()).toBe("That is not your password: give your current password.");
    await business.getByLabel("Test settlement wallet").fill("0x1234");
    await business.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, change it" }).click();
    await expect.poll(() => alert.innerText()).toMatch(/^Test settlement wallet: 0x1234 is not a valid checksummed EVM address/);

    // An invoice's due date: the picker offers no past day, and the form says so beside the field.
    await page.goto(`${app.url}/dashboard/invoices/new?customer=${customer.id}`);
    const due = page.getByLabel(/^Due date/);
    expect(await due.getAttribute("min")).toBe(new Date().toISOString().slice(0, 10));
    await due.fill("2020-01-31");
    expect(await due.getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#due-date-note").innerText()).toBe("This date has passed: choose today or a later one, or leave it empty.");
    await page.context().close();
  });

  it("lists stack into cards at 360 px: the charges table fits its box", async () => {
    const page = await newPage(360);
    await signInAs(page, app.url, email);
    await go(page, "Charges");
    const table = page.locator(".table-wrap table");
    await table.waitFor();
    const [tableWidth, boxWidth] = await table.evaluate((t) => [t.scrollWidth, t.parentElement!.clientWidth]);
    expect(tableWidth).toBeLessThanOrEqual(boxWidth!);
    expect(
      await page
        .locator("tr[data-charge] td[data-label='Amount']")
        .first()
        .evaluate((td) => getComputedStyle(td, "::before").content),
    ).toBe('"Amount"');
    await page.context().close();
  });
});
