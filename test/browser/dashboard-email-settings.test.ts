// The dashboard's email settings for buyers in a real browser: Settings → Emails to buyers turns the
// invoice, receipt and refund emails on and sets the support address, which the server keeps; a
// payment link made with "Ask the buyer's email" collects it, and its page says so. No serious
// accessibility finding, nothing wider than the screen.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

let app: TestApp;
let browser: Browser;
let email: string;

beforeAll(async () => {
  mkdirSync(new URL("../.output/", import.meta.url), { recursive: true });
  app = await startApp(POLLING);
  email = (
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: `owner-${randomBytes(4).toString("hex")}@shop.example`, password: PASSWORD }, OPERATOR)
  ).email;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("emails to buyers in the dashboard", () => {
  it("turns the emails on and sets the support address in Settings", async () => {
    const page = await openPage(browser);
    await signInAs(page, app.url, email);
    await go(page, "Settings");
    const section = page.getByRole("region", { name: "Emails to buyers" });
    await section.getByLabel(/Email a receipt/).check();
    await section.getByLabel(/Email an invoice/).check();
    await section.getByLabel(/^Support email/).fill("help@shop.example");
    await section.getByRole("button", { name: "Save email settings" }).click();
    await section.getByRole("status").filter({ hasText: "Email settings saved." }).waitFor();
    expect(
      await app.db.prisma.merchant.findUniqueOrThrow({
        where: { id: app.merchant.merchant.id },
        select: { emailInvoices: true, emailReceipts: true, emailRefunds: true, supportEmail: true },
      }),
    ).toEqual({ emailInvoices: true, emailReceipts: true, emailRefunds: false, supportEmail: "help@shop.example" });
    await auditPage(page, "dashboard-email-settings", 1280);

    // Cleared, the support address is none.
    await section.getByLabel(/^Support email/).fill("");
    await section.getByRole("button", { name: "Save email settings" }).click();
    await expect.poll(async () => (await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } })).supportEmail).toBeNull();
    await page.context().close();
  });

  it("makes a payment link that asks the buyer's email", async () => {
    const page = await openPage(browser);
    await signInAs(page, app.url, email);
    await go(page, "Payment links");
    const form = page.getByRole("region", { name: "New payment link" });
    await form.getByLabel("Name").fill("Gift card");
    await form.getByLabel(/^Amount/).fill("20.00");
    await form.getByLabel(/Ask the buyer's email/).check();
    await form.getByRole("button", { name: "Create payment link" }).click();
    await expect.poll(() => app.db.prisma.paymentLink.count({ where: { name: "Gift card", collectEmail: true } })).toBe(1);
    await page.getByRole("link", { name: "Gift card" }).click();
    await expect.poll(() => page.locator("[data-collect-email]").textContent()).toBe("Yes");
    await page.context().close();
  });
});
