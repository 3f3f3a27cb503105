// A payment link that asks the buyer's email (collectEmail), in a real browser: the field is labelled
// and required, the browser refuses to press Pay without a valid address, a header-injection attempt
// sent anyway is refused by the server with the page again (nothing made), and a good address makes
// the charge, which keeps it as customerEmail. No serious accessibility finding. Pay → Back → Pay in the
// same browser comes back to the same charge; a quantity the buyer picks is charged and stated.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  app = await startApp();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 360, height: 800 }, bypassCSP: true });
  return context.newPage();
}

describe("payment link asking the buyer's email", () => {
  it("asks for it, labelled and required, and the charge keeps it", async () => {
    const made = await app.call("POST", "/v1/payment_links", { body: { name: "Poster", amount: "7.50", collectEmail: true } });
    expect(made.status, made.text).toBe(201);
    const link = made.body.id as string;
    const charges = () => app.db.prisma.charge.findMany({ where: { paymentLinkId: link }, select: { id: true, customerEmail: true } });
    const page = await newPage();
    await page.goto(`${app.url}/pay/l/${link}`);

    const field = page.getByLabel(/Your email/);
    expect(await field.getAttribute("type")).toBe("email");
    expect(await field.getAttribute("required")).not.toBeNull();
    expect(await seriousViolations(page)).toEqual([]);

    // The browser keeps an empty or malformed address from being sent.
    await page.getByRole("button", { name: "Pay 7.50 USDC" }).click();
    expect(await field.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
    await field.fill("not an email");
    await page.getByRole("button", { name: "Pay 7.50 USDC" }).click();
    expect(await field.evaluate((input: HTMLInputElement) => input.validity.valid)).toBe(false);
    expect(page.url()).toBe(`${app.url}/pay/l/${link}`);

    // Sent anyway (the browser's check is a courtesy), a header injection is refused by the server.
    // (A textarea: an input's value loses its line breaks.)
    await field.evaluate((input: HTMLInputElement) => {
      const area = document.createElement("textarea");
      area.name = input.name;
      area.id = input.id;
      area.value = "buyer@example.com\r\nBcc: evil@example.com";
      input.replaceWith(area);
    });
    await page.getByRole("button", { name: "Pay 7.50 USDC" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("Enter your email address");
    expect(await charges()).toEqual([]);

    await page.getByLabel(/Your email/).fill("poster-buyer@example.com");
    await Promise.all([page.waitForURL(/\/pay\/chrg_/), page.getByRole("button", { name: "Pay 7.50 USDC" }).click()]);
    const chargeId = new URL(page.url()).pathname.split("/").pop();
    expect(await charges()).toEqual([{ id: chargeId, customerEmail: "poster-buyer@example.com" }]);
    await page.context().close();
  });

  it("Pay → Back → Pay comes back to the same charge; another quantity makes a new one of amount × quantity", async () => {
    const made = await app.call("POST", "/v1/payment_links", { body: { name: "Stickers", amount: "2.50", collectEmail: true, quantityMax: 5 } });
    expect(made.status, made.text).toBe(201);
    const link = made.body.id as string;
    const page = await newPage();
    await page.goto(`${app.url}/pay/l/${link}`);
    expect(await page.locator(".amount").textContent()).toBe("2.50 USDC each");
    const quantity = page.getByLabel("Quantity (1 to 5)");
    expect(await quantity.getAttribute("max")).toBe("5");
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel(/Your email/).fill("sticker-buyer@example.com");
    await quantity.fill("4");
    await Promise.all([page.waitForURL(/\/pay\/chrg_/), page.getByRole("button", { name: "Continue to payment" }).click()]);
    const first = page.url();

    await page.goBack();
    await page.waitForURL(`${app.url}/pay/l/${link}`);
    await page.getByLabel(/Your email/).fill("sticker-buyer@example.com");
    await page.getByLabel("Quantity (1 to 5)").fill("4");
    await Promise.all([page.waitForURL(/\/pay\/chrg_/), page.getByRole("button", { name: "Continue to payment" }).click()]);
    expect(page.url()).toBe(first);

    await page.goBack();
    await page.getByLabel(/Your email/).fill("sticker-buyer@example.com");
    await page.getByLabel("Quantity (1 to 5)").fill("2");
    await Promise.all([
      page.waitForURL((u) => /\/pay\/chrg_/.test(u.pathname) && u.href !== first),
      page.getByRole("button", { name: "Continue to payment" }).click(),
    ]);
    const charges = await app.db.prisma.charge.findMany({
      where: { paymentLinkId: link },
      orderBy: { createdAt: "asc" },
      select: { amount: true, description: true },
    });
    expect(charges).toEqual([
      { amount: 10_000_000n, description: "Stickers × 4" },
      { amount: 5_000_000n, description: "Stickers × 2" },
    ]);
    await page.context().close();
  });
});
