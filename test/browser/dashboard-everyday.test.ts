// The dashboard's everyday actions in a real browser against the service on an anvil devnet with its
// chain runner and webhook dispatcher: a charge created from the Charges page (problems shown beside
// the fields in words, its payment link copied, the buyer's page opened and paid to COMPLETED), a
// webhook endpoint limited to one event type (only that type is delivered; each attempt's status and
// response shown), an API key with a name and its last use, and the Copy button's two outcomes.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { type Dispatcher, startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";
import { auditPage, go, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const RUN = randomBytes(4).toString("hex");
let chain: TestChain;
let app: TestApp;
let browser: Browser;
let runner: Periodic;
let dispatcher: Dispatcher;
let receiver: Receiver;
let producer: NodeJS.Timeout;
let email: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  chain = await startTestChain();
  const devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  dispatcher = startWebhookDispatcher(app.db.prisma, pino({ level: "silent" }), { intervalMs: 50 });
  receiver = await startReceiver();
  receiver.respond((_r, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("received, thanks"));
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  email = (await createUser(app.db.prisma, app.merchant.merchant.id, { email: `everyday-${RUN}@shop.example`, password: PASSWORD }, OPERATOR)).email;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  await browser?.close();
  await dispatcher?.stop();
  await runner?.stop();
  await receiver?.close();
  await app?.stop();
  await chain?.stop();
});

async function dashboard(width = 1280): Promise<Page> {
  const page = await openPage(browser, { width });
  page.on("pageerror", (e) => console.error("page error:", e));
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
  await signInAs(page, app.url, email);
  return page;
}

describe("everyday actions in the dashboard", () => {
  it("limits a webhook endpoint to charge.completed, creates a charge that the buyer pays, and shows the delivery with its response", async () => {
    const page = await dashboard();
    await go(page, "Developers");
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByText("Event types (every type unless you choose some)").click();
    const fresh = page.locator(".event-types-new");
    await fresh.getByLabel("charge.completed", { exact: true }).check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    // The signing secret is shown once, with its Copy button.
    const secret = (await page.locator("[data-secret]").textContent({ timeout: 10_000 }))!;
    expect(secret).toMatch(/^whsec_/);
    await page.locator(".secret").getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator(".secret").getByRole("button", { name: "Copied" }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const endpoint = await app.db.prisma.webhookEndpoint.findFirstOrThrow({ where: { url: receiver.url } });
    expect(endpoint.eventTypes).toEqual(["charge.completed"]);
    await expect.poll(() => page.locator(`[data-endpoint="${endpoint.id}"]`).textContent()).toContain("charge.completed");
    await auditPage(page, "everyday-developers", 1280);

    // Create charge: problems are shown beside their fields, in words.
    await go(page, "Charges");
    await page.getByRole("link", { name: "Create charge" }).click();
    await page.getByLabel("Amount (USDC)").fill("12.3456789");
    await page.getByRole("button", { name: "Create charge" }).click();
    await expect.poll(() => page.locator('[data-problem="amount"]').textContent()).toBe("Enter an amount in USDC, such as 25.00 (at most 6 decimals).");
    expect(await page.locator('[data-problem="orderId"]').textContent()).toBe("Enter the order this charge is for, such as 1042.");
    expect(await page.getByLabel("Amount (USDC)").getAttribute("aria-invalid")).toBe("true");
    // Beyond the charge limit: the API's refusal, beside the amount, without its field names.
    await page.getByLabel("Amount (USDC)").fill("2000000");
    await page.getByLabel("Order id").fill(`phone-${RUN}`);
    await page.getByRole("button", { name: "Create charge" }).click();
    await expect.poll(() => page.locator('[data-problem="amount"]').textContent()).toMatch(/^Amount must be between 0\.01 and 1000000(\.00)? USDC$/);
    expect(await page.locator('[data-problem="orderId"]').count()).toBe(0);
    await auditPage(page, "everyday-new-charge", 1280);

    const customer = (await app.call("POST", "/v1/customers", { body: { email: `phone-buyer-${RUN}@example.com`, name: "Phone Buyer" } })).body;
    await page.getByLabel("Amount (USDC)").fill("12.50");
    await page.getByLabel("Description (shown to the buyer)").fill("Two mugs, ordered by phone");
    await page.getByLabel("Find customer").fill(`phone-buyer-${RUN}`);
    await page.getByRole("button", { name: "Find" }).click();
    await expect.poll(() => page.getByRole("combobox", { name: "Customer" }).locator("option").count()).toBe(2);
    await page.getByRole("combobox", { name: "Customer" }).selectOption(customer.id);
    await page.getByRole("button", { name: "Create charge" }).click();
    const url = (await page.locator("[data-payment-url]").textContent({ timeout: 10_000 }))!;
    const chargeId = url.split("/").pop()!;
    expect(url).toMatch(/\/pay\/chrg_/);
    expect((await app.call("GET", `/v1/charges/${chargeId}`)).body).toMatchObject({
      amount: "12.50",
      orderId: `phone-${RUN}`,
      description: "Two mugs, ordered by phone",
      customerId: customer.id,
      status: "PENDING",
    });
    await page.getByRole("button", { name: "Copy payment link" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await auditPage(page, "everyday-charge-created", 1280);

    // The buyer opens the link and pays on the devnet.
    const buyer = await openPage(browser, { width: 360 });
    await buyer.goto(url.replace(/^https?:\/\/[^/]+/, app.url));
    await expect.poll(() => buyer.locator("body").textContent()).toContain("12.50");
    const selected = await app.call("POST", `/v1/public/charges/${chargeId}/chain`, { key: null, body: { chainId: 31337 } });
    await chain.mint(chain.wallet(3).address, 20_000_000n);
    await chain.pay(chain.wallet(3), selected.body.cloneAddress, 12_500_000n);
    await buyer.context().close();

    await page.getByRole("link", { name: "Open the charge" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 60_000 }).toBe(`phone-${RUN} COMPLETED`);

    // Only charge.completed went to the endpoint; its attempt shows the status and the response.
    const [delivered] = await receiver.waitForCount(1, 30_000);
    expect(JSON.parse(delivered!.body).type).toBe("charge.completed");
    await go(page, "Developers");
    const log = page.locator(`[data-endpoint="${endpoint.id}"] .deliveries`);
    await expect.poll(() => log.textContent(), { timeout: 20_000 }).toContain("charge.completed: succeeded");
    await log.getByText("Attempts and responses").click();
    expect(await log.locator("[data-attempt]").first().textContent()).toContain("HTTP 200");
    expect(await log.locator("[data-response-body]").first().textContent()).toBe("received, thanks");
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(["charge.completed"]);

    // The event types can be changed from the form too.
    await page.locator(`[data-endpoint="${endpoint.id}"]`).getByText("Choose its event types").click();
    const edit = page.locator(`[data-endpoint="${endpoint.id}"] .event-types-edit`);
    expect(await edit.getByLabel("charge.completed", { exact: true }).isChecked()).toBe(true);
    await edit.getByLabel("charge.expired", { exact: true }).check();
    await edit.getByRole("button", { name: "Save event types" }).click();
    await expect
      .poll(async () => (await app.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).eventTypes.sort())
      .toEqual(["charge.completed", "charge.expired"]);
    await page.context().close();
  });

  it("names a new API key and shows when it was last used", async () => {
    const page = await dashboard();
    await go(page, "Developers");
    await page.getByLabel("Name (optional)").fill("Shop backend");
    await page.getByRole("button", { name: "Create API key" }).click();
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, create it" }).click();
    const secret = (await page.locator("[data-secret]").textContent({ timeout: 10_000 }))!;
    const key = await app.db.prisma.apiKey.findFirstOrThrow({ where: { name: "Shop backend" } });
    const row = page.locator(`[data-key="${key.id}"]`);
    expect(await row.locator("[data-key-name]").textContent()).toContain("Shop backend");
    expect(await row.locator("[data-last-used]").textContent()).toBe("never used");
    expect((await app.call("GET", "/v1/customers", { key: secret })).status).toBe(200);
    await page.reload();
    await expect.poll(() => row.locator("[data-last-used]").textContent()).toMatch(/^last used /);
    await page.context().close();
  });

  it("where the clipboard is refused, Copy selects the text and says so", async () => {
    const page = await dashboard();
    await page.evaluate(() => {
      Object.defineProperty(navigator, "clipboard", { value: { writeText: () => Promise.reject(new Error("denied")) } });
    });
    await go(page, "Payment links");
    await page.getByLabel("Name").fill("Poster");
    await page.getByLabel("Amount (USDC)").fill("7");
    await page.getByRole("button", { name: "Create payment link" }).click();
    await page.getByRole("link", { name: "Poster" }).first().click();
    const url = (await page.locator("[data-link-url]").textContent({ timeout: 10_000 }))!;
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Could not copy" }).count()).toBe(1);
    expect(await page.evaluate(() => window.getSelection()?.toString())).toBe(url);
    await page.context().close();
  });
});
