// Customers and the seller's business details in the dashboard, in a real browser (Debian's chromium
// through playwright-core), with no chain: a customer created with an address, another given one on its
// page, a third deleted through a confirmation that names it (its draft invoice stays, without it); the
// legal name, address, tax id and logo set in Settings and shown on a hosted invoice, whose logo loads
// under the page's own CSP. Accessibility, no console errors, screenshots at 1280 and 360 px.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { png } from "../helpers/png.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const RUN = randomBytes(4).toString("hex");
const mail = (name: string) => `${name}-${RUN}@shop.example`;
let app: TestApp;
let browser: Browser;
let email: string;
const consoleErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  app = await startApp(POLLING);
  email = (await createUser(app.db.prisma, app.merchant.merchant.id, { email: mail("owner"), password: PASSWORD }, OPERATOR)).email;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function newPage(width = 1280, bypassCSP = true): Promise<Page> {
  const page = await openPage(browser, { width, bypassCSP });
  page.on("pageerror", (e) => consoleErrors.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // Not errors of the pages: the sign-in page's probe for a session (401 until signed in) and the favicon there is none of.
    const expected = /\/dashboard\/session$|\/favicon\.ico$/.test(m.location().url) && m.text().startsWith("Failed to load resource");
    if (m.type() === "error" && !expected) consoleErrors.push(`${m.text()} ${m.location().url}`);
  });
  return page;
}

const signIn = (page: Page) => signInAs(page, app.url, email);

/** At `width` (the viewport set to it): see auditPage. */
const audit = (page: Page, name: string, width: number) => auditPage(page, name, width, { resize: true });

const customer = async (name: string, extra: Record<string, unknown> = {}) =>
  (await app.call("POST", "/v1/customers", { body: { email: mail(name.toLowerCase().replace(/\W+/g, "-")), name, ...extra } })).body;

describe("customers and business details in the dashboard", () => {
  it("creates a customer with an address, gives another one an address, deletes a third after a confirmation naming it", async () => {
    const page = await newPage();
    await signIn(page);
    await go(page, "Customers");
    await page.getByRole("button", { name: "New customer" }).click();
    const form = page.getByRole("region", { name: "New customer" });
    await form.getByLabel("Name").fill("Ada Lovelace");
    await form.getByLabel("Email").fill(mail("ada"));
    await form.getByLabel("Company").fill("Engines Ltd");
    await form.getByLabel("Tax id").fill("GB123456789");
    await form.getByLabel("Street and number").fill("12 St James's Square");
    await form.getByLabel("City").fill("London");
    await form.getByLabel("Postal code").fill("SW1Y 4LB");
    await form.getByLabel(/^Country/).selectOption({ label: "United Kingdom" });
    for (const width of [1280, 360]) await audit(page, "dashboard-customer-new", width);
    await page.setViewportSize({ width: 1280, height: 900 });
    await form.getByRole("button", { name: "Create customer" }).click();
    await page.getByRole("heading", { level: 1, name: "Ada Lovelace" }).waitFor();
    const [ada] = (await app.call("GET", `/v1/customers?email=${encodeURIComponent(mail("ada"))}`)).body.data;
    expect(ada).toMatchObject({
      name: "Ada Lovelace",
      companyName: "Engines Ltd",
      taxId: "GB123456789",
      phone: null,
      address: { line1: "12 St James's Square", line2: "", city: "London", state: "", postalCode: "SW1Y 4LB", country: "GB" },
    });
    expect(page.url()).toBe(`${app.url}/dashboard/customers/${ada.id}`);

    // A customer made over the API, without an address, gets one on its page.
    const grace = await customer("Grace Hopper");
    await page.goto(`${app.url}/dashboard/customers/${grace.id}`);
    const address = page.getByRole("region", { name: "Address" });
    await address.getByLabel("Street and number").fill("1 Navy Way");
    await address.getByLabel("City").fill("Arlington");
    await address.getByLabel("State or region").fill("VA");
    await address.getByLabel(/^Country/).selectOption({ label: "United States" });
    await address.getByRole("button", { name: "Save address" }).click();
    await address.getByRole("status").filter({ hasText: "Address saved." }).waitFor();
    expect((await app.call("GET", `/v1/customers/${grace.id}`)).body.address).toEqual({
      line1: "1 Navy Way",
      line2: "",
      city: "Arlington",
      state: "VA",
      postalCode: "",
      country: "US",
    });
    for (const width of [1280, 360]) await audit(page, "dashboard-customer-address", width);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Delete asks first, naming the customer; its draft invoice stays, without a customer.
    const victim = await customer("Victor Deleted");
    const draft = (
      await app.call("POST", "/v1/invoices", { body: { customerId: victim.id, lineItems: [{ description: "Tea", quantity: 1, unitAmount: "3.00" }] } })
    ).body;
    await page.goto(`${app.url}/dashboard/customers/${victim.id}`);
    await page.getByRole("button", { name: "Delete customer" }).click();
    const question = page.getByRole("group", { name: /^Delete Victor Deleted/ });
    expect(await question.textContent()).toContain(`Delete Victor Deleted (${victim.email})? This cannot be undone.`);
    await question.getByRole("button", { name: "Keep it" }).click();
    expect((await app.call("GET", `/v1/customers/${victim.id}`)).status).toBe(200);
    await page.getByRole("button", { name: "Delete customer" }).click();
    await page.getByRole("button", { name: "Delete Victor Deleted" }).click();
    await page.getByRole("heading", { level: 1, name: "Customers" }).waitFor();
    expect((await app.call("GET", `/v1/customers/${victim.id}`)).status).toBe(404);
    expect((await app.call("GET", `/v1/invoices/${draft.id}`)).body).toMatchObject({ id: draft.id, status: "DRAFT", customerId: null });
    await expect.poll(() => page.getByRole("link", { name: mail("ada") }).count()).toBe(1);
    expect(await page.getByRole("link", { name: victim.email }).count()).toBe(0);
    await page.context().close();
    expect(consoleErrors).toEqual([]);
  });

  it("sets the legal name, address, tax id and logo in Settings, and a hosted invoice shows them", async () => {
    const page = await newPage();
    await signIn(page);
    await go(page, "Settings");
    const section = page.getByRole("region", { name: "Business details" });
    await section.getByLabel(/^Legal name/).fill("Test Shop Trading Ltd");
    await section.getByLabel(/^Tax id/).fill("GB999999973");
    await section.getByLabel("Street and number").fill("1 Kiln Lane");
    await section.getByLabel("Postal code").fill("ST1 1AA");
    await section.getByLabel("City").fill("Stoke-on-Trent");
    await section.getByLabel(/^Country/).selectOption({ label: "United Kingdom" });
    const logo = section.getByLabel(/^Logo/);

    // Refused in the page (too big) and by the server (not an image whatever its name says), each saying why.
    await logo.setInputFiles({ name: "huge.png", mimeType: "image/png", buffer: Buffer.alloc(70 * 1024) });
    await section.getByRole("button", { name: "Save business details" }).click();
    await expect.poll(() => section.getByRole("alert").textContent()).toBe("The logo must be at most 64 KB; this one is 70 KB.");
    await logo.setInputFiles({ name: "fake.png", mimeType: "image/png", buffer: Buffer.from("GIF89a;") });
    await section.getByRole("button", { name: "Save business details" }).click();
    await expect.poll(() => section.getByRole("alert").textContent()).toBe("Logo: is not a PNG or JPEG image (its bytes are neither)");

    const image = png({ width: 90, height: 30, colourType: 2 });
    await logo.setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: image });
    await section.getByRole("button", { name: "Save business details" }).click();
    await section.getByRole("status").filter({ hasText: "Business details saved." }).waitFor();
    await expect.poll(() => section.getByRole("img", { name: "Current logo" }).evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(90);
    const row = await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } });
    expect(row).toMatchObject({ legalName: "Test Shop Trading Ltd", taxId: "GB999999973", logoType: "image/png" });
    expect(Buffer.from(row.logo!).equals(image)).toBe(true);
    for (const width of [1280, 360]) await audit(page, "dashboard-settings-business", width);

    // An invoice issued now carries them; its page loads the logo under its own CSP.
    const buyer = await customer("Invoice Buyer", { address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" } });
    const draft = (
      await app.call("POST", "/v1/invoices", { body: { customerId: buyer.id, lineItems: [{ description: "Mugs", quantity: 2, unitAmount: "5.00" }] } })
    ).body;
    const invoice = (await app.call("POST", `/v1/invoices/${draft.id}/finalize`)).body;
    const buyerPage = await newPage(1280, false);
    await buyerPage.goto(`${app.url}/pay/invoices/${invoice.id}`);
    const from = buyerPage.getByRole("region", { name: "From" });
    expect((await from.innerText()).split("\n").filter(Boolean)).toEqual([
      "From",
      "Test Shop Trading Ltd",
      "1 Kiln Lane",
      "ST1 1AA Stoke-on-Trent",
      "GB",
      "Tax ID: GB999999973",
    ]);
    expect((await buyerPage.getByRole("region", { name: "Bill to" }).innerText()).split("\n")).toEqual(
      expect.arrayContaining(["Invoice Buyer", "Hauptstraße 1", "10115 Berlin", "DE"]),
    );
    expect(await buyerPage.locator("img.logo").evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(90);
    await buyerPage.context().close();
    const audited = await newPage();
    await audited.goto(`${app.url}/pay/invoices/${invoice.id}`);
    for (const width of [1280, 360]) await audit(audited, "invoice-seller", width);
    await audited.context().close();
    await page.context().close();
    expect(consoleErrors).toEqual([]);
  });
});
