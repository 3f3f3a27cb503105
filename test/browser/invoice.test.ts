// The hosted invoice page and the payment link page in a real browser (Debian's chromium driven by
// playwright-core) against the service on an anvil devnet with its chain runner: a buyer opens an
// invoice, pays it with the test wallet and comes back to it PAID; a payment link makes a charge per
// buyer and, once retired, answers 410. Accessibility and 360 px layout of both pages; screenshots go
// to test/.output/. The same setup as pay.test.ts, behind a small front proxy (see `front`).
import { mkdirSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain, testWalletDevnet } from "../helpers/chain.js";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const CONFIRMATIONS = 2;
const RUN = randomBytes(4).toString("hex");
let chain: TestChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let producer: NodeJS.Timeout;
let front: Server;
/** Where the buyer reaches the service: PUBLIC_URL, hence hostedInvoiceUrl, a link's url and the charge's way back. */
let origin: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  // The harness starts the service on a port it picks itself, after the configuration is read: the
  // URLs the service gives out (hostedInvoiceUrl, a link's url, the invoice charge's successUrl) name
  // PUBLIC_URL. A front proxy, as in a deployment, makes that URL one the browser can open.
  front = createServer((req, res) => {
    const target = new URL(app.url);
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((listening) => front.listen(0, "127.0.0.1", listening));
  origin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;

  chain = await startTestChain();
  const devnet = await chain.enabled(CONFIRMATIONS);
  app = await startApp({ ...POLLING, PUBLIC_URL: origin }, { chains: new ChainSet([devnet]), devnet: await testWalletDevnet(chain) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), {
    intervalMs: 50,
    settings: { ...SETTINGS, paymentBaseUrl: `${origin}/pay`, feed: app.live },
    bumpAfterMs: 60_000,
  });
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  await browser?.close();
  front?.closeAllConnections();
  front?.close();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

async function newPage(width = 1280, bypassCSP = false): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
  return page;
}

/** At 360 px and 1280 px: nothing wider than the screen, no serious axe finding, and a screenshot. */
async function checkLayout(url: string, name: string, status = 200): Promise<void> {
  for (const width of [360, 1280]) {
    const page = await newPage(width, true); // axe is a script the pages' CSP would refuse
    expect((await page.goto(url))?.status()).toBe(status);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${width} px`).toBeLessThanOrEqual(width);
    await page.screenshot({ path: new URL(`${name}-${width}.png`, OUTPUT).pathname, fullPage: true });
    expect(await seriousViolations(page), `${name} at ${width} px`).toEqual([]);
    await page.context().close();
  }
}

const text = async (page: Page, selector: string) => (await page.locator(selector).innerText()).trim();
const cells = (page: Page, rows: string) =>
  page.locator(rows).evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as HTMLElement).innerText.trim())));

describe("invoices and payment links in a browser", () => {
  it("a buyer opens a hosted invoice, pays it with the test wallet and sees PAID", async () => {
    const customer = await app.call("POST", "/v1/customers", {
      body: {
        email: `ada-${RUN}@engines.example`,
        name: "Ada Lovelace",
        companyName: "Analytical Engines Ltd",
        taxId: "GB123456789",
        address: { line1: "12 St James's Square", city: "London", postalCode: "SW1Y 4JH", country: "GB" },
      },
    });
    expect(customer.status, customer.text).toBe(201);
    const created = await app.call("POST", "/v1/invoices", {
      body: {
        customerId: customer.body.id,
        lineItems: [
          { description: "Engine punch cards", quantity: 2, unitAmount: "5.00" },
          { description: "Delivery", quantity: 1, unitAmount: "2.50" },
        ],
        dueDate: "2099-12-31",
        memo: "Thank you for your order.",
      },
    });
    expect(created.status, created.text).toBe(201);
    const finalized = await app.call("POST", `/v1/invoices/${created.body.id}/finalize`);
    expect(finalized.status, finalized.text).toBe(200);
    const invoice = finalized.body;
    expect(invoice).toMatchObject({ status: "OPEN", total: "12.50", amountDue: "12.50", hostedInvoiceUrl: `${origin}/pay/invoices/${invoice.id}` });
    expect(invoice.number).toMatch(/^INV-\d{6}$/);

    // Layout and accessibility while it is due (the Pay form shown).
    await checkLayout(invoice.hostedInvoiceUrl, "invoice-open");

    const page = await newPage();
    const started = Date.now();
    expect((await page.goto(invoice.hostedInvoiceUrl))?.status()).toBe(200);
    expect(await text(page, "h1")).toBe(`Invoice ${invoice.number}`);
    expect(await text(page, "#status")).toBe("Due: 12.50 USDC");
    const billTo = await text(page, ".bill-to");
    for (const line of ["Ada Lovelace", "Analytical Engines Ltd", "Tax ID: GB123456789", "12 St James's Square"]) expect(billTo).toContain(line);
    expect(await cells(page, "table.lines tbody tr")).toEqual([
      ["Engine punch cards", "2", "5.00", "10.00"],
      ["Delivery", "1", "2.50", "2.50"],
    ]);
    expect(await cells(page, "table.lines tfoot tr")).toEqual([
      ["Total", "12.50 USDC"],
      ["Amount paid", "0.00 USDC"],
      ["Amount due", "12.50 USDC"],
    ]);
    expect(await page.locator("main").innerText()).toContain("Thank you for your order.");

    // The PDF it links to.
    const pdfHref = await page.getByRole("link", { name: "Download PDF" }).getAttribute("href");
    const pdf = await fetch(new URL(pdfHref!, page.url()));
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toMatch(/^application\/pdf/);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe("%PDF-");

    // Pay: the charge's page, the devnet, the test wallet.
    await page.getByRole("button", { name: "Pay 12.50 USDC" }).click();
    await page.waitForURL(/\/pay\/chrg_[A-Za-z0-9]+$/);
    const chargeId = new URL(page.url()).pathname.split("/").pop()!;
    expect(await text(page, ".amount")).toBe("12.50 USDC");
    await page.getByLabel("Local devnet").check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address");
    await page.getByRole("button", { name: "Pay with test wallet (TEST MODE)" }).click();

    // Confirmed, then back on the invoice (the charge's successUrl), which says Paid.
    await page.waitForURL((url) => url.pathname === `/pay/invoices/${invoice.id}`, { timeout: 90_000 });
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(invoice.hostedInvoiceUrl);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ chargeId, orderId: invoice.id, status: "COMPLETED" });
    console.log(`invoice paid and back on its page in ${Date.now() - started} ms`);
    expect(await page.locator("#status").getAttribute("data-status")).toBe("PAID");
    expect(await text(page, "#status")).toBe("Paid");
    expect(await cells(page, "table.lines tfoot tr")).toEqual([
      ["Total", "12.50 USDC"],
      ["Amount paid", "12.50 USDC"],
      ["Amount due", "0.00 USDC"],
    ]);
    expect(await page.getByRole("button", { name: /^Pay / }).count()).toBe(0);
    await page.screenshot({ path: new URL("invoice-paid-1280.png", OUTPUT).pathname, fullPage: true });
    await page.context().close();

    expect((await app.call("GET", `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: "PAID", amountPaid: "12.50", amountDue: "0.00" });
    expect((await app.call("GET", `/v1/charges/${chargeId}`)).body).toMatchObject({ status: "COMPLETED", amount: "12.50", invoiceId: invoice.id });

    await checkLayout(invoice.hostedInvoiceUrl, "invoice-paid");
  });

  it("a payment link makes a charge per buyer and retires with a 410", async () => {
    const created = await app.call("POST", "/v1/payment_links", { body: { name: "Concert ticket", amount: "7.5", description: "Row F, seat 12" } });
    expect(created.status, created.text).toBe(201);
    const link = created.body;
    expect(link).toMatchObject({ amount: "7.50", active: true, url: `${origin}/pay/l/${link.id}` });

    await checkLayout(link.url, "payment-link");

    const page = await newPage();
    expect((await page.goto(link.url))?.status()).toBe(200);
    expect(await text(page, "h1")).toBe("Concert ticket");
    expect(await text(page, ".description")).toBe("Row F, seat 12");
    expect(await text(page, ".amount")).toBe("7.50 USDC");

    const pay = async () => {
      await page.getByRole("button", { name: "Pay 7.50 USDC" }).click();
      await page.waitForURL(/\/pay\/chrg_[A-Za-z0-9]+$/);
      expect(await text(page, ".amount")).toBe("7.50 USDC");
      return new URL(page.url()).pathname.split("/").pop()!;
    };
    const first = await pay();
    await page.goBack();
    expect(page.url()).toBe(link.url);
    // The same buyer pressing Pay again gets their open charge back; another buyer (another browser
    // session: the link's cookie gone) gets a charge of their own.
    expect(await pay()).toBe(first);
    await page.goBack();
    await page.context().clearCookies();
    const second = await pay();
    expect(second).not.toBe(first);
    for (const id of [first, second]) {
      expect((await app.call("GET", `/v1/charges/${id}`)).body).toMatchObject({ status: "PENDING", amount: "7.50", paymentLinkId: link.id });
    }

    // Retired: the page answers 410 and says so, and Pay makes no charge.
    const retired = await app.call("PATCH", `/v1/payment_links/${link.id}`, { body: { active: false } });
    expect(retired.status, retired.text).toBe(200);
    expect(retired.body.active).toBe(false);
    await page.goBack();
    expect((await page.reload())?.status()).toBe(410);
    expect(await text(page, "h1")).toBe("This payment link no longer takes payments");
    expect(await page.locator("main").innerText()).toContain("Test Shop has retired it. Ask Test Shop for a new link.");
    const post = await fetch(link.url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" });
    expect(post.status).toBe(410);
    await page.context().close();

    await checkLayout(link.url, "payment-link-inactive", 410);
  });
});
