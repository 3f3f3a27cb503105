// The merchant dashboard in a real browser (Debian's chromium through playwright-core) against the
// service on an anvil devnet with its chain runner and webhook dispatcher: sign-in (wrong password,
// lock-out, TOTP), the mode switch, an API key used with curl, a webhook endpoint's test delivery, a
// charge appearing and completing live, search by transaction hash, its ledger rows, a refund through
// the claim page to COMPLETED, editing a customer, a charge flagged for review (badge, filter, reason,
// mark reviewed) with another token at its address swept, an invoice made, finalized and sent (hosted link, PDF), a payment
// link made and deactivated, sign out everywhere; accessibility, screenshots and the first load's weight.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { balanceDifferences, recordReconciliation } from "../../src/domain/reconcile.js";
import { totpCode } from "../../src/domain/totp.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser, startTotpEnrollment } from "../../src/domain/users.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { type Dispatcher, startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { launchChromium, seriousViolations } from "../helpers/browser.js";
import { auditPage, go, openPage, PASSWORD, signedIn, submitSignIn } from "./dashboard-helpers.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";
import { until } from "../helpers/wait.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// Emails of this run only: on Redis the sign-in counters outlive a run, and CI runs follow each other.
const RUN = randomBytes(4).toString("hex");
const mail = (name: string) => `${name}-${RUN}@shop.example`;
const BUYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const run = promisify(execFile);
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
  producer = setInterval(() => void chain.mine().catch(() => {}), 250);
  email = (await createUser(app.db.prisma, app.merchant.merchant.id, { email: mail("owner"), password: PASSWORD }, OPERATOR)).email;
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

/** GraphQL subscriptions the service started so far (its /metrics counter), whatever their outcome. */
async function subscriptionStarts(): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  return [...text.matchAll(/^stablegate_graphql_operations_total\{[^}]*type="subscription"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/**
 * Waits until a page's live subscription that started after `since` starts is the only one the service
 * holds open (the page it replaced closed its own), and is confirmed: a change made now reaches it.
 */
async function pageSubscribed(since: number): Promise<number> {
  const starts = await until("the page's live subscription", async () => {
    const n = await subscriptionStarts();
    return n > since && app.pubsub.subscriptions === 1 && n;
  });
  await app.pubsub.confirmed();
  return starts;
}

async function newPage(width = 1280, bypassCSP = false): Promise<Page> {
  const page = await openPage(browser, { width, bypassCSP });
  page.on("pageerror", (e) => console.error("page error:", e));
  return page;
}

/** Submits the sign-in form (signedIn waits for the dashboard). */
const signIn = (page: Page, who = email, password = PASSWORD) => submitSignIn(page, app.url, who, { password });

/** Checks the page as it is at `width` (see auditPage). */
const audit = (page: Page, name: string, width: number) => auditPage(page, `dashboard-${name}`, width);

describe("the dashboard in a browser", () => {
  it("signs in: a wrong password says so, 5 failures lock the email, TOTP asks for a code", async () => {
    const page = await newPage();
    await signIn(page, email, "not the password");
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Wrong email or password.");

    const victim = (await createUser(app.db.prisma, app.merchant.merchant.id, { email: mail("locked"), password: PASSWORD }, OPERATOR)).email;
    for (let i = 0; i < 5; i++) {
      await signIn(page, victim, `wrong password ${i}`);
      await expect.poll(() => page.getByRole("alert").textContent()).toBe("Wrong email or password.");
    }
    await signIn(page, victim, PASSWORD);
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^Too many failed sign-ins for this email: the limit is 5 per 15 minutes/);

    const guarded = await createUser(app.db.prisma, app.merchant.merchant.id, { email: mail("2fa"), password: PASSWORD }, OPERATOR);
    const { secret } = await startTotpEnrollment(app.db.prisma, { ...guarded, totpSecret: null }, OPERATOR);
    await app.db.prisma.user.update({ where: { id: guarded.id }, data: { totpSecret: secret, totpPending: null } });
    await signIn(page, guarded.email);
    await page.getByLabel("Two-factor code").fill(totpCode(secret, Date.now()));
    await page.getByRole("button", { name: "Sign in" }).click();
    await signedIn(page);
    expect(await page.locator(".user").textContent()).toBe(mail("2fa"));
    await page.context().close();
  });

  it("switches modes with test mode always marked; creates an API key that works with curl; a webhook endpoint shows its test delivery", async () => {
    const page = await newPage();
    await signIn(page);
    await signedIn(page);
    await expect.poll(() => page.getByRole("note").textContent()).toMatch(/^Test mode/);
    await page.getByRole("switch", { name: "Live mode" }).click();
    await expect.poll(() => page.getByRole("switch", { name: "Live mode" }).isChecked()).toBe(true);
    // The checkbox ticks on the click; the banner goes once the server has switched the session.
    await expect.poll(() => page.getByRole("note").count()).toBe(0);
    await page.getByRole("switch", { name: "Live mode" }).click();
    await expect.poll(() => page.getByRole("note").count()).toBe(1);

    await go(page, "Developers");
    await page.getByLabel("IP allowlist (optional)").fill("127.0.0.1, ::1");
    // Making a key asks the password again (signing in does not count).
    await page.getByRole("button", { name: "Create API key" }).click();
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, create it" }).click();
    const secret = (await page.locator("[data-secret]").textContent({ timeout: 10_000 }))!;
    expect(secret).toMatch(/^sk_test_/);
    const { stdout } = await run("curl", ["-s", `${app.url}/v1/customers`, "-H", `X-API-Key: ${secret}`]);
    expect(JSON.parse(stdout)).toMatchObject({ object: "list" });
    await expect.poll(() => page.getByText("only from 127.0.0.1, ::1").count()).toBe(1);

    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => page.locator("[data-secret]").textContent()).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Send test event (charge.completed)" }).click();
    await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThan(0);
    // The log shows the delivery once it is recorded; the page reads it again on reload.
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator("[data-delivery]").first().textContent({ timeout: 5_000 });
        },
        { timeout: 20_000 },
      )
      .toMatch(/charge\.completed: succeeded · 200 in \d+ ms/);
    await page.context().close();
  });

  it("shows a new charge and its way to COMPLETED without reload, finds it by transaction hash, refunds part of it through the claim page, edits a customer", async () => {
    const page = await newPage();
    const before = await subscriptionStarts();
    await signIn(page);
    await signedIn(page);
    const home = await pageSubscribed(before);
    await go(page, "Charges");
    await page.getByRole("searchbox").waitFor();
    // Created through the API once the page's live subscription is in place: it appears, then completes, live.
    await pageSubscribed(home);
    const customer = (await app.call("POST", "/v1/customers", { body: { email: "buyer@example.com", name: "Buyer One" } })).body;
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "dash-live-1", amount: "12.5", customerId: customer.id } })).body;
    const row = page.locator(`tr[data-charge="${charge.id}"]`);
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 15_000 }).toBe("PENDING");
    const selected = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    await chain.mint(chain.wallet(2).address, 20_000_000n);
    const txHash = await chain.pay(chain.wallet(2), selected.body.cloneAddress, 12_500_000n);
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 60_000 }).toBe("COMPLETED");

    await page.getByRole("searchbox").fill(txHash);
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    await row.getByRole("link", { name: "dash-live-1" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("dash-live-1 COMPLETED");
    await expect.poll(() => page.locator(".timeline li").count()).toBeGreaterThanOrEqual(3);
    await expect
      .poll(() => page.locator('[data-ledger="PAYMENT"]').first().textContent(), { timeout: 10_000 })
      .toMatch(/^PAYMENT \+12\.50 USDC · Local devnet · 0x/);

    // The address the charge was paid to is refused, with the reason, and no refund is made.
    const address = page.getByLabel("Buyer's address (empty: a claim link for the buyer)");
    await address.fill(selected.body.cloneAddress);
    await page.getByRole("button", { name: "Refund", exact: true }).click();
    await page
      .getByRole("group", { name: `Refund all that is left (12.50 USDC) on Local devnet to ${selected.body.cloneAddress}? Your settlement wallet pays it.` })
      .getByRole("button", { name: "Yes, refund 12.50 USDC" })
      .click();
    await expect.poll(() => page.getByRole("alert").textContent(), { timeout: 10_000 }).toContain("address this charge was paid to");
    expect(await app.db.prisma.refund.count({ where: { chargeId: charge.id } })).toBe(0);
    await address.fill("");

    // A refund with a claim link: the buyer gives an address on the claim page, the merchant's wallet
    // pays, and the charge's page shows it COMPLETED without reload.
    await page.getByLabel("Amount (empty: all that is left)").fill("2.5");
    await page.getByLabel("Reason").fill("one mug broken");
    await page.getByRole("button", { name: "Refund", exact: true }).click();
    // It asks first, naming the amount and that a claim link goes to the buyer.
    await page
      .getByRole("group", { name: "Refund 2.5 USDC on Local devnet through a claim link the buyer gives an address to? Your settlement wallet pays it." })
      .getByRole("button", { name: "Yes, refund 2.5 USDC" })
      .click();
    const claimUrl = new URL((await page.locator("[data-claim-url]").textContent({ timeout: 10_000 }))!);
    const buyer = await newPage(360, true);
    await buyer.goto(`${app.url}${claimUrl.pathname}${claimUrl.search}`);
    await buyer.getByLabel("Your wallet address on Local devnet").fill(BUYER);
    await buyer.getByLabel("The same address again").fill(BUYER.toLowerCase());
    expect(await seriousViolations(buyer)).toEqual([]);
    expect(await buyer.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await buyer.screenshot({ path: new URL("refund-claim-360.png", OUTPUT).pathname, fullPage: true });
    await buyer.getByRole("button", { name: "Send my refund to this address" }).click();
    await expect.poll(() => buyer.getByRole("status").textContent()).toContain(BUYER);
    await buyer.context().close();
    // The address changes the refund, not the charge, so the page shows it on its next read.
    await page.reload();
    await expect.poll(() => page.locator("[data-refund] .status").first().textContent(), { timeout: 10_000 }).toBe("AWAITING_PAYMENT");
    await chain.pay(chain.wallet(1), BUYER, 2_500_000n);
    await expect.poll(() => page.locator("[data-refund] .status").first().textContent(), { timeout: 30_000 }).toBe("COMPLETED");
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body.amountRefunded).toBe("2.50");

    await page.getByRole("link", { name: "buyer@example.com" }).click();
    await page.getByLabel("Company").fill("Buyer GmbH");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Saved.");
    expect((await app.call("GET", `/v1/customers/${customer.id}`)).body.companyName).toBe("Buyer GmbH");
    await page.context().close();
  });

  it("pays a refund from the merchant's browser wallet (EIP-1193), which the chain then completes", async () => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "dash-wallet-refund", amount: "4" } })).body;
    const selected = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    await chain.pay(chain.wallet(2), selected.body.cloneAddress, 4_000_000n);
    await expect.poll(async () => (await app.call("GET", `/v1/charges/${charge.id}`)).body.status, { timeout: 60_000 }).toBe("COMPLETED");
    const refund = (await app.call("POST", `/v1/charges/${charge.id}/refunds`, { body: { amount: "1.5", address: BUYER } })).body;
    // The merchant's wallet (anvil account 1, the charge's settlement wallet) holds the USDC it pays with.
    const merchant = chain.wallet(1);
    await chain.mint(merchant.address, 1_500_000n);

    const page = await newPage();
    const sent: string[] = [];
    await page.exposeFunction("__merchantWallet", async (method: string, params: any[]) => {
      switch (method) {
        case "eth_requestAccounts":
          return [merchant.address];
        case "eth_chainId":
          return "0x7a69";
        case "eth_sendTransaction": {
          const tx = await merchant.sendTransaction({ to: params[0].to, data: params[0].data });
          sent.push(tx.hash);
          return tx.hash;
        }
      }
      throw new Error(`unsupported method ${method}`);
    });
    await page.addInitScript(() => {
      const provider = { request: ({ method, params }: { method: string; params?: unknown[] }) => (window as any).__merchantWallet(method, params ?? []) };
      const info = {
        uuid: "merchant-wallet",
        name: "Merchant Wallet",
        icon: "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>",
        rdns: "test.merchant",
      };
      window.addEventListener("eip6963:requestProvider", () =>
        window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) })),
      );
    });
    await signIn(page);
    await signedIn(page);
    await page.goto(`${app.url}/dashboard/charges/${charge.id}`);
    const row = page.locator(`[data-refund="${refund.id}"]`);
    await row.getByRole("button", { name: "Pay with wallet" }).click();
    await expect.poll(() => row.getByRole("status").textContent()).toMatch(/^ Sent: waiting for confirmations/);
    expect(sent).toHaveLength(1);
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 30_000 }).toBe("COMPLETED");
    expect((await app.call("GET", `/v1/refunds/${refund.id}`)).body).toMatchObject({ status: "COMPLETED", txHash: sent[0] });
    await page.context().close();
  });

  it("flags a charge for review: the list marks and filters it, its page says why and marks it reviewed; another token at its address is swept", async () => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "dash-review-1", amount: "3" } })).body;
    const selected = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { key: null, body: { chainId: 31337 } });
    // The worker first compares a just-picked address with the chain (finding nothing at it): the
    // reconciliation below comes after that, as the worker's next one would.
    await expect
      .poll(async () => (await app.db.prisma.clone.findFirst({ where: { chargeId: charge.id } }))?.balanceCheckedAt, { timeout: 30_000 })
      .toBeInstanceOf(Date);
    // A reorg took away money the ledger counts, and another token sits at the address.
    const differences = balanceDifferences(31337, [{ chargeId: charge.id, address: selected.body.cloneAddress, expected: 1_000_000n }], [0n]);
    const token = "0x7777777777777777777777777777777777777777";
    const strays = [{ chargeId: charge.id, token, amount: 2n * 10n ** 18n }];
    expect(await recordReconciliation(app.db.prisma, 31337, [charge.id], differences, strays, { ...SETTINGS, feed: app.live })).toEqual([charge.id]);

    const page = await newPage(1280, true);
    await signIn(page);
    await signedIn(page);
    await go(page, "Charges");
    const row = page.locator(`tr[data-charge="${charge.id}"]`);
    await expect.poll(() => row.locator(".status-review").textContent(), { timeout: 10_000 }).toBe("Needs review");
    await page.getByRole("button", { name: "Needs review (1)" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Needs review (1)" }).getAttribute("aria-pressed")).toBe("true");
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    await row.getByRole("link", { name: "dash-review-1" }).click();

    const review = page.getByRole("region", { name: "Needs review" });
    await expect.poll(() => review.locator("[data-review-reason]").textContent(), { timeout: 10_000 }).toBe(differences[0]!.message);
    expect(await page.getByRole("region", { name: "Ledger" }).textContent()).toContain("No confirmed money movement yet.");
    const stray = page.locator(`[data-stray="${token}"]`);
    expect(await stray.textContent()).toContain("2000000000000000000 base units · Local devnet");
    await audit(page, "charge-review", 1280);
    const narrow = await newPage(360, true);
    await signIn(narrow);
    await signedIn(narrow);
    await narrow.goto(`${app.url}/dashboard/charges/${charge.id}`);
    await narrow.getByRole("region", { name: "Needs review" }).waitFor();
    await audit(narrow, "charge-review", 360);
    await narrow.context().close();

    // A sweep is asked for; the worker refuses it (the token is no contract), and the page learns of
    // that from chargeUpdated: the sweep's end arrives live, with why, and it can be asked again.
    await stray.getByRole("button", { name: "Sweep to wallet" }).click();
    await stray.getByRole("button", { name: "Yes, sweep it" }).click();
    await expect.poll(() => stray.locator("[data-sweep] .status").textContent(), { timeout: 10_000 }).toMatch(/^(PENDING|SENT|DONE|FAILED)$/);
    const sweepId = (await stray.locator("[data-sweep]").getAttribute("data-sweep"))!;
    expect(await app.db.prisma.sweep.findUnique({ where: { id: sweepId } })).toMatchObject({ chargeId: charge.id, chainId: 31337, token });
    await expect.poll(() => stray.locator("[data-sweep] .status").textContent(), { timeout: 20_000 }).toBe("FAILED");
    const failed = await app.db.prisma.sweep.findUniqueOrThrow({ where: { id: sweepId } });
    expect(await stray.locator("[data-sweep] .error").textContent()).toBe(` ${failed.error}`);
    await stray.getByRole("button", { name: "Sweep again" }).waitFor();

    await review.getByRole("button", { name: "Mark reviewed" }).click();
    await review.getByRole("button", { name: "Yes, mark it reviewed" }).click();
    await page.getByRole("status").filter({ hasText: "Marked reviewed." }).waitFor();
    expect(await review.count()).toBe(0);
    expect(await app.db.prisma.charge.findUnique({ where: { id: charge.id } })).toMatchObject({ reviewReason: null });
    await expect.poll(() => page.locator(".timeline li strong").allTextContents()).toContain("charge.reviewed");
    await go(page, "Charges");
    await page.getByRole("button", { name: "Needs review (0)" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(0);
    await page.getByRole("button", { name: "All charges" }).click();
    await row.waitFor();
    expect(await row.locator(".status-review").count()).toBe(0);
    await page.context().close();
  });

  it("makes an invoice of two lines, finalizes it (number, hosted link to copy, PDF), makes a payment link and deactivates it; their pages pass axe at 360 and 1280 px", async () => {
    const buyer = `invoiced-${RUN}@example.com`;
    const customer = (await app.call("POST", "/v1/customers", { body: { email: buyer, name: "Invoiced Buyer" } })).body;
    const page = await newPage();
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    await signIn(page);
    await signedIn(page);
    await go(page, "Invoices");
    await page.getByRole("link", { name: "New invoice" }).click();
    await page.getByRole("heading", { level: 1, name: "New invoice" }).waitFor();
    await page.getByLabel("Find customer").fill(buyer);
    await page.getByRole("button", { name: "Find", exact: true }).click();
    await page.getByLabel("Customer", { exact: true }).selectOption(customer.id);
    const line = (n: number) => page.getByRole("group", { name: `Line ${n}`, exact: true });
    await line(1).getByLabel("Description").fill("Mug, blue");
    await line(1).getByLabel("Quantity").fill("3");
    await line(1).getByLabel("Unit price (USDC)").fill("12.5");
    await page.getByRole("button", { name: "Add line" }).click();
    await line(2).getByLabel("Description").fill("Shipping");
    await line(2).getByLabel("Unit price (USDC)").fill("4.99");
    // The total as typed, exact (3 × 12.5 + 4.99), before the server has seen it.
    await expect.poll(() => page.locator("[data-form-total]").textContent()).toBe("42.49 USDC");
    await page.getByLabel(/^Due date/).fill("2030-12-31");
    await page.getByLabel("Memo (optional; shown on the invoice)").fill("Thank you!");
    await page.getByRole("button", { name: "Create draft" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toBe("Draft invoice DRAFT");
    const invoiceId = new URL(page.url()).pathname.split("/").at(-1)!;
    expect(invoiceId).toMatch(/^inv_/);
    expect(await page.locator('[data-total="Total"]').textContent()).toBe("42.49");
    // A draft changes: two of the second line now.
    await page.getByRole("button", { name: "Edit" }).click();
    await line(2).getByLabel("Quantity").fill("2");
    await expect.poll(() => page.locator("[data-form-total]").textContent()).toBe("47.48 USDC");
    await page.getByRole("button", { name: "Save draft" }).click();
    await expect.poll(() => page.locator('[data-total="Total"]').textContent(), { timeout: 10_000 }).toBe("47.48");

    await page.getByRole("button", { name: "Finalize" }).click();
    await page.getByRole("button", { name: "Yes, finalize it" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/^INV-\d{6} OPEN$/);
    const number = (await page.getByRole("heading", { level: 1 }).textContent())!.split(" ")[0]!;
    const hosted = (await page.locator("[data-hosted-url]").textContent())!;
    expect(hosted).toMatch(new RegExp(`/invoices/${invoiceId}$`));
    await page.getByRole("button", { name: "Copy link" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(hosted);
    const pdfUrl = new URL((await page.getByRole("link", { name: "Download PDF" }).getAttribute("href"))!);
    const pdf = await fetch(`${app.url}${pdfUrl.pathname}`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toMatch(/^application\/pdf/);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe("%PDF-");
    expect((await app.call("GET", `/v1/invoices/${invoiceId}`)).body).toMatchObject({
      number,
      status: "OPEN",
      customerId: customer.id,
      total: "47.48",
      amountDue: "47.48",
      dueDate: "2030-12-31T23:59:59.999Z",
      memo: "Thank you!",
      lineItems: [
        { description: "Mug, blue", quantity: 3, unitAmount: "12.50", amount: "37.50" },
        { description: "Shipping", quantity: 2, unitAmount: "4.99", amount: "9.98" },
      ],
    });
    // The customer presses Pay on the hosted page: the invoice lists the charge, whose page names the invoice.
    const paying = await fetch(`${app.url}${new URL(hosted).pathname}/pay`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual",
    });
    expect(paying.status).toBe(303);
    const invoiceCharge = paying.headers.get("location")!.split("/").at(-1)!;
    await page.reload();
    await page.getByRole("region", { name: "Charges" }).getByRole("link").first().click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/dashboard/charges/${invoiceCharge}`);
    await expect.poll(() => page.locator("[data-pays]").textContent()).toBe(`Pays invoice ${number}`);
    await page.locator("[data-pays]").getByRole("link", { name: number }).click();
    // The customer's page lists it.
    await page.getByRole("link", { name: `Invoiced Buyer · ${buyer}` }).click();
    await page.getByRole("region", { name: "Invoices" }).getByRole("link", { name: number }).waitFor();

    await go(page, "Payment links");
    const name = `Poster ${RUN}`;
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Amount (USDC)").fill("15");
    await page.getByLabel("Description (optional)").fill("A2, matte");
    await page.getByLabel("Success URL (optional: where buyers go once paid)").fill("https://shop.example/thanks");
    await page.getByRole("button", { name: "Create payment link" }).click();
    const row = page.locator("[data-link]", { hasText: name });
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 10_000 }).toBe("ACTIVE");
    expect(await row.locator("[data-charges]").textContent()).toBe("0 charges");
    const linkId = (await row.getAttribute("data-link"))!;
    const linkPage = `${app.url}${new URL((await row.locator("[data-link-url]").textContent())!).pathname}`;
    expect((await fetch(linkPage)).status).toBe(200);
    // A buyer pays there: the link counts the charge, whose page names the link.
    const bought = await fetch(linkPage, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" });
    expect(bought.status).toBe(303);
    await page.reload();
    await expect.poll(() => row.locator("[data-charges]").textContent(), { timeout: 10_000 }).toBe("1 charge");
    await row.getByRole("link", { name }).click();
    await page.getByRole("region", { name: "Charges (1)" }).getByRole("link").click();
    await expect.poll(() => page.locator("[data-pays]").textContent()).toBe(`From payment link ${name}`);
    await go(page, "Payment links");
    await row.getByRole("button", { name: "Deactivate" }).click();
    await row.getByRole("button", { name: "Yes, deactivate it" }).click();
    await expect.poll(() => row.locator(".status").textContent()).toBe("INACTIVE");
    expect((await app.call("GET", `/v1/payment_links/${linkId}`)).body).toMatchObject({
      name,
      amount: "15.00",
      active: false,
      successUrl: "https://shop.example/thanks",
    });
    expect((await fetch(linkPage)).status).toBe(410);
    await page.context().close();

    for (const width of [360, 1280]) {
      const page = await newPage(width, true);
      await signIn(page);
      await signedIn(page);
      await go(page, "Invoices");
      const invoiceRow = page.locator(`tr[data-invoice="${invoiceId}"]`);
      await invoiceRow.waitFor();
      await audit(page, "invoices", width);
      await invoiceRow.getByRole("link", { name: number }).click();
      await page.getByRole("heading", { level: 1, name: number }).waitFor();
      // With the confirm step open, which acts only when confirmed.
      await page.getByRole("button", { name: "Void", exact: true }).click();
      await page.getByRole("button", { name: "Yes, void it" }).waitFor();
      await audit(page, "invoice", width);
      await page.getByRole("button", { name: "Keep it" }).click();
      await page.getByRole("button", { name: "Void", exact: true }).waitFor();
      expect((await app.call("GET", `/v1/invoices/${invoiceId}`)).body.status).toBe("OPEN");
      await go(page, "Invoices");
      await page.getByRole("link", { name: "New invoice" }).click();
      await page.getByRole("button", { name: "Add line" }).click();
      await audit(page, "new-invoice", width);
      await go(page, "Payment links");
      await page.locator(`[data-link="${linkId}"]`).waitFor();
      await audit(page, "payment-links", width);
      await page.context().close();
    }
  });

  it("signs out everywhere: every open session goes back to sign-in", async () => {
    const first = await newPage();
    const second = await newPage();
    for (const page of [first, second]) {
      await signIn(page);
      await signedIn(page);
    }
    await go(first, "Settings");
    await first.getByRole("button", { name: "Sign out everywhere" }).click();
    await first.getByRole("button", { name: "Yes, sign out everywhere" }).click();
    await first.getByRole("button", { name: "Sign in" }).waitFor();
    await second.reload();
    await second.getByRole("button", { name: "Sign in" }).waitFor();
    await first.context().close();
    await second.context().close();
  });

  it("is accessible (axe: no serious violations) at 360 and 1280 px, and its first load is under 150 KB compressed", async () => {
    for (const width of [360, 1280]) {
      const page = await newPage(width, true);
      let compressed = 0;
      page.on("response", async (res) => {
        if (res.url().includes("/dashboard/assets/")) compressed += Number((await res.headerValue("content-length")) ?? 0);
      });
      await signIn(page);
      await signedIn(page);
      for (const [link, name] of [
        ["Home", "home"],
        ["Charges", "charges"],
        ["Developers", "developers"],
        ["Settings", "settings"],
      ] as const) {
        await go(page, link);
        await page.getByRole("heading", { level: 1, name: link }).waitFor();
        await audit(page, name, width);
      }
      expect(compressed).toBeGreaterThan(10_000);
      expect(compressed).toBeLessThan(150 * 1024);
      console.info(`dashboard first load at ${width} px: ${(compressed / 1024).toFixed(1)} KB of gzipped script and stylesheet`);
      await page.context().close();
    }
  });
});
