// Plans and subscriptions in the dashboard, in a real browser: Plans creates a plan and retires
// another; a customer's page subscribes the customer to a plan and opens the new subscription, whose
// checkout link is shown to copy; Cancel now asks first and cancels it; the Subscriptions list filters
// by status. No serious accessibility finding, nothing wider than the screen (1280 and 360 px).
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
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: `subs-${randomBytes(4).toString("hex")}@shop.example`, password: PASSWORD }, OPERATOR)
  ).email;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("subscriptions in the dashboard", () => {
  it("creates a plan, subscribes a customer, shows the checkout link and cancels", async () => {
    const page = await openPage(browser);
    await signInAs(page, app.url, email);

    await go(page, "Plans");
    const form = page.getByRole("region", { name: "New plan" });
    await form.getByLabel("Name").fill("Old plan");
    await form.getByLabel("Amount (USDC)").fill("3");
    await form.getByRole("button", { name: "Create plan" }).click();
    await page.getByText("Old plan").waitFor();
    await form.getByLabel("Name").fill("Pro quarterly");
    await form.getByLabel("Amount (USDC)").fill("60");
    await form.getByLabel("Every").fill("3");
    await form.getByLabel("Period").selectOption("MONTH");
    await form.getByLabel("Trial (days)").fill("14");
    await form.getByRole("button", { name: "Create plan" }).click();
    const row = page.locator("li[data-plan]", { hasText: "Pro quarterly" });
    await row.waitFor();
    expect(await row.innerText()).toContain("60.00 USDC every 3 months");
    const old = page.locator("li[data-plan]", { hasText: "Old plan" });
    await old.getByRole("button", { name: "Retire" }).click();
    await old.getByRole("button", { name: "Yes, retire it" }).click();
    await old.getByRole("button", { name: "Reactivate" }).waitFor();
    const plans = await app.db.prisma.plan.findMany({ where: { merchantId: app.merchant.merchant.id }, orderBy: { createdAt: "asc" } });
    expect(plans.map((p) => [p.name, p.amount, p.interval, p.intervalCount, p.trialDays, p.active])).toEqual([
      ["Old plan", 3_000_000n, "month", 1, 0, false],
      ["Pro quarterly", 60_000_000n, "month", 3, 14, true],
    ]);
    await auditPage(page, "dashboard-plans", 1280);
    await auditPage(page, "dashboard-plans", 360, { resize: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    const customer = (await app.call("POST", "/v1/customers", { body: { email: "dana@buyer.example", name: "Dana" } })).body;
    await page.goto(`${app.url}/dashboard/customers/${customer.id}`);
    const section = page.getByRole("region", { name: "Subscriptions" });
    await section.getByText("No subscription yet.").waitFor();
    // Only active plans are offered.
    expect(await section.getByLabel("Plan").locator("option").allInnerTexts()).toEqual(["Pro quarterly: 60.00 USDC every 3 months"]);
    await section.getByRole("button", { name: "New subscription" }).click();
    await page.waitForURL(/\/dashboard\/subscriptions\/sub_/);
    const sub = await app.db.prisma.subscription.findFirstOrThrow({ where: { customerId: customer.id } });
    expect(sub).toMatchObject({ status: "INCOMPLETE", amount: 60_000_000n, periodSeconds: 90 * 86_400, trialDays: 14 });
    await page.getByRole("heading", { name: /Pro quarterly/ }).waitFor();
    expect(await page.locator("[data-checkout-url]").innerText()).toBe(`${app.settings.paymentBaseUrl}/subscribe/${sub.id}`);
    expect(await page.locator("[data-manage-url]").innerText()).toContain(`/subscribe/${sub.id}/manage?token=`);
    await auditPage(page, "dashboard-subscription", 1280);
    await auditPage(page, "dashboard-subscription", 360, { resize: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // No period yet: only Cancel now is offered, and it asks first.
    expect(await page.getByRole("button", { name: "Cancel at period end" }).count()).toBe(0);
    await page.getByRole("button", { name: "Cancel now" }).click();
    await page.getByText("Cancel now? Nothing more is pulled.").waitFor();
    await page.getByRole("button", { name: "Cancel now" }).click();
    await page.getByText("(requested)").waitFor();
    expect(await page.getByRole("heading", { name: /Pro quarterly/ }).innerText()).toContain("CANCELED");
    expect((await app.db.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } })).cancelReason).toBe("requested");

    await go(page, "Subscriptions");
    await page.locator(`[data-subscription="${sub.id}"]`).waitFor();
    await page.getByLabel("Status").selectOption("ACTIVE");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/status=ACTIVE/);
    await page.getByText("0 subscriptions").waitFor();
    await page.goBack();
    await page.locator(`[data-subscription="${sub.id}"]`).waitFor();
  });
});
