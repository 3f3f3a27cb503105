// Developers → Emails in a real browser (Debian's chromium through playwright-core), with no chain and
// no SMTP_URL: the page says emails are kept and not sent, lists them with filters in the URL (by type
// here), and an email's page draws its HTML part in a sandboxed frame (no script, the merchant's logo
// inline, its inline styles applied with the CSPs on: the dashboard's and the frame's own), and shows
// its text part. Accessibility, no console errors,
// screenshots at 1280 and 360 px.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { writeEmail } from "../helpers/email-rows.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { png } from "../helpers/png.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// Emails of this run only: on Redis the sign-in counters outlive a run, and CI runs follow each other.
const RUN = randomBytes(4).toString("hex");
let app: TestApp;
let browser: Browser;
let user: string;
const ids: Record<"invoice" | "receipt" | "reset", string> = { invoice: "", receipt: "", reset: "" };
const consoleErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  app = await startApp(POLLING);
  const merchant = app.merchant.merchant.id;
  user = (await createUser(app.db.prisma, merchant, { email: `emails-${RUN}@shop.example`, password: PASSWORD }, OPERATOR)).email;
  await app.db.prisma.merchant.update({ where: { id: merchant }, data: { logo: new Uint8Array(png({ width: 4, height: 4 })), logoType: "image/png" } });
  ids.invoice = await writeEmail(app.db.prisma, merchant, {
    type: "invoice",
    to: "ada@buyer.example",
    subject: "Invoice INV-0042 from Test Shop",
    heading: "Invoice INV-0042",
    paragraphs: ["Amount due: 42.00 USDC, by 1 December."],
    inlineLogo: true,
    status: "HELD",
  });
  ids.receipt = await writeEmail(app.db.prisma, merchant, { type: "receipt", to: "bob@buyer.example", subject: "Your receipt", status: "SENT", attempts: 1 });
  ids.reset = await writeEmail(app.db.prisma, merchant, {
    type: "password_reset",
    to: user,
    subject: "Reset your password",
    status: "FAILED",
    attempts: 1,
    lastError: "550 5.1.1 mailbox unavailable",
  });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function newPage(width: number, bypassCSP = true): Promise<Page> {
  const page = await openPage(browser, { width, bypassCSP });
  page.on("pageerror", (e) => consoleErrors.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // Not errors of the pages: the sign-in page's probe for a session (401 until signed in) and the favicon there is none of.
    const expected = /\/dashboard\/session$|\/favicon\.ico$/.test(m.location().url) && m.text().startsWith("Failed to load resource");
    if (m.type() === "error" && !expected) consoleErrors.push(`${m.text()} ${m.location().url}`);
  });
  return page;
}

const rows = (page: Page) => page.locator("tbody tr[data-email]").evaluateAll((trs) => trs.map((r) => r.getAttribute("data-email")));

describe("Developers → Emails", () => {
  it("lists the kept emails, says they are not sent, filters by type in the URL, and opens one's HTML and text", async () => {
    for (const width of [1280, 360]) {
      const page = await newPage(width);
      await signInAs(page, app.url, user);
      await go(page, "Developers");
      await page.getByRole("link", { name: "See the emails" }).click();
      await page.getByRole("heading", { level: 1, name: "Emails" }).waitFor();
      await expect.poll(() => new URL(page.url()).pathname).toBe("/dashboard/developers/emails");
      await page.getByRole("note").filter({ hasText: "Emails are kept here and not sent: SMTP_URL is not set" }).waitFor();
      await expect.poll(() => rows(page), { timeout: 10_000 }).toEqual(expect.arrayContaining(Object.values(ids)));
      await auditPage(page, "dashboard-emails", width);

      await page.getByLabel("Type").selectOption("INVOICE");
      await page.getByRole("button", { name: "Filter" }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get("type")).toBe("invoice");
      await expect.poll(() => rows(page), { timeout: 10_000 }).toEqual([ids.invoice]);
      // A reload keeps the filter.
      await page.reload();
      await expect.poll(() => rows(page), { timeout: 10_000 }).toEqual([ids.invoice]);
      expect(await page.getByLabel("Type").inputValue()).toBe("INVOICE");

      await page.getByRole("link", { name: "Invoice INV-0042 from Test Shop" }).click();
      await page.getByRole("heading", { level: 1, name: "Invoice INV-0042 from Test Shop" }).waitFor();
      const facts = page.getByRole("region", { name: "Email" });
      await expect.poll(() => facts.innerText()).toContain("ada@buyer.example");
      expect(await facts.innerText()).toContain("HELD");
      await page.getByRole("note").filter({ hasText: "SMTP_URL is not set" }).waitFor();
      // The HTML part in a frame with an empty sandbox: no script, no origin of its own.
      const frame = page.locator("iframe.email-html");
      expect(await frame.getAttribute("sandbox")).toBe("");
      const html = page.frameLocator("iframe.email-html");
      await html.getByRole("heading", { name: "Invoice INV-0042" }).waitFor();
      expect(await html.getByText("Amount due: 42.00 USDC, by 1 December.").count()).toBe(1);
      expect(await html.locator("img").getAttribute("src")).toMatch(/^data:image\/png;base64,/);
      expect(await page.locator("[data-text]").innerText()).toContain("Amount due: 42.00 USDC, by 1 December.");
      await auditPage(page, "dashboard-email", width);
      await page.context().close();
    }
    expect(consoleErrors).toEqual([]);
  });

  it("shows a failed email's attempts and the server's reply", async () => {
    const page = await newPage(1280);
    await signInAs(page, app.url, user, { path: `/developers/emails?status=failed` });
    await expect.poll(() => rows(page), { timeout: 10_000 }).toEqual([ids.reset]);
    await page.getByRole("link", { name: "Reset your password" }).click();
    await page.getByRole("heading", { level: 1, name: "Reset your password" }).waitFor();
    expect(await page.locator("[data-last-error]").innerText()).toBe("550 5.1.1 mailbox unavailable");
    expect(await page.getByRole("region", { name: "Email" }).innerText()).toMatch(/Attempts\s+1/);
    await page.context().close();
    expect(consoleErrors).toEqual([]);
  });

  it("draws the HTML part as it arrived with the CSPs on: its styles and logo, and nothing refused", async () => {
    const page = await newPage(1280, false);
    await signInAs(page, app.url, user, { path: `/developers/emails/${ids.invoice}` });
    const html = page.frameLocator("iframe.email-html");
    const heading = html.getByRole("heading", { name: "Invoice INV-0042" });
    await heading.waitFor();
    // The layout's inline style (20px), not the browser's default for an h1.
    expect(await heading.evaluate((h) => getComputedStyle(h).fontSize)).toBe("20px");
    await expect.poll(() => html.locator("img").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(4);
    await page.context().close();
    expect(consoleErrors).toEqual([]);
  });

  it("runs no script an email's HTML might hold", async () => {
    // No email type writes a script (the layout escapes everything): a row changed by hand stands for a bug.
    const id = await writeEmail(app.db.prisma, app.merchant.merchant.id, { subject: "Hostile" });
    const hostile = `<p id="mark">not run</p><script>document.getElementById("mark").textContent = "ran"; parent.document.title = "ran";</script>`;
    await app.db.prisma.email.update({ where: { id }, data: { html: hostile } });
    const page = await newPage(1280, false);
    await signInAs(page, app.url, user, { path: `/developers/emails/${id}` });
    const html = page.frameLocator("iframe.email-html");
    await html.locator("#mark").waitFor();
    expect(await html.locator("#mark").textContent()).toBe("not run");
    expect(await page.title()).not.toBe("ran");
    await page.context().close();
    // The browser says it blocked the script; nothing else went wrong.
    expect(consoleErrors.filter((e) => !/^(Blocked script execution|Refused to execute inline script)/.test(e))).toEqual([]);
  });
});
