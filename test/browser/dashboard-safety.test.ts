// The dashboard's safety rails in a real browser (Debian's chromium through playwright-core), with no
// chain: confirmations that name what they act on (key, endpoint, user, wallet), the password asked
// again for a wallet change, a new or rolled key and a new user, a rolled key revoked at once, two-factor
// setup with a QR code and ten recovery codes, a replayed code refused at sign-in, a recovery code that
// signs in once; accessibility and screenshots at 1280 and 360 px.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { getAddress, hexlify } from "ethers";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../src/domain/totp.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { auditPage, go, openPage, PASSWORD, signedIn, submitSignIn } from "./dashboard-helpers.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// Emails of this run only: on Redis the sign-in counters outlive a run.
const RUN = randomBytes(4).toString("hex");
let app: TestApp;
let browser: Browser;
let owner: string;
let n = 0;
/** CSP refusals the pages reported: none may happen. */
const cspErrors: string[] = [];

const newUser = async (name: string) =>
  (await createUser(app.db.prisma, app.merchant.merchant.id, { email: `${name}${++n}-${RUN}@shop.example`, password: PASSWORD }, OPERATOR)).email;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  app = await startApp(POLLING);
  owner = await newUser("owner");
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function newPage(width = 1280, bypassCSP = false): Promise<Page> {
  const page = await openPage(browser, { width, bypassCSP });
  page.on("pageerror", (e) => console.error("page error:", e));
  page.on("console", (m) => m.type() === "error" && /Content Security Policy/.test(m.text()) && cspErrors.push(m.text()));
  return page;
}

/** Submits the sign-in form (signedIn waits for the dashboard). */
const signIn = (page: Page, who: string, code?: string) => submitSignIn(page, app.url, who, { code });

/** The open confirmation: its question is its accessible name. */
const question = (page: Page) => page.getByRole("group").filter({ has: page.getByRole("button", { name: "Keep it" }) });
/** Presses Save in the Business section (where the wallets are). */
const saveBusiness = (page: Page) => page.getByRole("region", { name: "Business", exact: true }).getByRole("button", { name: "Save" }).click();
const keyRow = (page: Page, last4: string) => page.locator("[data-key]").filter({ hasText: `…${last4}` });

/** Checks the page as it is at `width` (see auditPage). */
const audit = (page: Page, name: string, width: number) => auditPage(page, `dashboard-safety-${name}`, width);

/** The status of a GET /v1/customers with `key`. */
const keyWorks = async (key: string) => (await app.call("GET", "/v1/customers", { key })).status;

describe("the dashboard's safety rails", () => {
  it("asks the password to create and roll a key, names the key it revokes, and revokes a rolled key at once", async () => {
    const page = await newPage();
    await signIn(page, owner);
    await signedIn(page);
    await go(page, "Developers");

    await page.getByRole("button", { name: "Create API key" }).click();
    await expect.poll(() => question(page).getAttribute("aria-label")).toBe("Create a new test API key? Its secret is shown once.");
    await page.getByLabel("Your password").fill("not my password");
    await page.getByRole("button", { name: "Yes, create it" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^That is not your password/);
    await page.getByRole("button", { name: "Create API key" }).click();
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, create it" }).click();
    const made = (await page.locator("[data-secret]").textContent({ timeout: 10_000 }))!;
    expect(made).toMatch(/^sk_test_/);
    expect(await keyWorks(made)).toBe(200);

    const old = keyRow(page, made.slice(-4));
    await old.getByRole("button", { name: "Roll (old key works 24 h more)" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(
      `Roll the test key sk_test_…${made.slice(-4)}? A new key replaces it; this one keeps working for 24 hours unless you revoke it.`,
    );
    await question(page).getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, roll it" }).click();
    await expect.poll(() => page.locator("[data-secret]").textContent()).not.toBe(made);
    const rolled = (await page.locator("[data-secret]").textContent())!;
    await expect.poll(() => old.textContent()).toContain("rolled, works until");
    expect(await keyWorks(made)).toBe(200);

    // The old key, still working in its overlap, has its Revoke: one confirmation, and it stops.
    await old.getByRole("button", { name: "Revoke" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(`Revoke the test key sk_test_…${made.slice(-4)}? Whatever uses it stops working at once.`);
    await page.getByRole("button", { name: "Yes, revoke it" }).click();
    await expect.poll(() => old.textContent()).toContain("revoked");
    expect(await keyWorks(made)).toBe(401);
    expect(await keyWorks(rolled)).toBe(200);
    await page.context().close();
  });

  it("names the endpoint it rotates or deletes, and acts only once confirmed", async () => {
    const url = `http://127.0.0.1:9/hooks-${RUN}`;
    const created = await app.call("POST", "/v1/webhook_endpoints", { body: { url } });
    expect(created.status, created.text).toBe(201);
    const page = await newPage();
    await signIn(page, owner);
    await signedIn(page);
    await go(page, "Developers");
    const endpoint = page.locator(`[data-endpoint="${created.body.id}"]`);
    await endpoint.getByRole("button", { name: "Rotate secret" }).click();
    expect(await question(page).getAttribute("aria-label")).toMatch(new RegExp(`^Rotate the signing secret of ${url.replace(/[.?]/g, "\\$&")}\\?`));
    await page.getByRole("button", { name: "Keep it" }).click();
    await endpoint.getByRole("button", { name: "Delete" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(`Delete the endpoint ${url}? It gets no more events, and its pending deliveries are dropped.`);
    // Nothing happened while it asked.
    expect(await page.locator("[data-secret]").count()).toBe(0);
    expect((await app.call("GET", `/v1/webhook_endpoints/${created.body.id}`)).status).toBe(200);
    await page.getByRole("button", { name: "Yes, delete it" }).click();
    await expect.poll(() => endpoint.count()).toBe(0);
    expect((await app.call("GET", `/v1/webhook_endpoints/${created.body.id}`)).status).toBe(404);
    await page.context().close();
  });

  it("asks the password, naming the new address, before changing a settlement wallet; asks it to invite a user; names the invitation it revokes and the user it removes", async () => {
    const page = await newPage();
    await signIn(page, owner);
    await signedIn(page);
    await go(page, "Settings");
    const wallet = getAddress(hexlify(randomBytes(20)));
    const before = (await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } })).liveWallet;
    await page.getByLabel("Live settlement wallet").fill(wallet);
    await saveBusiness(page);
    expect(await question(page).getAttribute("aria-label")).toBe(
      `Change the live settlement wallet to ${wallet}? New charges pay out there; open charges keep the wallet they were created with.`,
    );
    // Without the password: refused, nothing changed.
    await page.getByRole("button", { name: "Yes, change it" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^This needs your password again/);
    expect((await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } })).liveWallet).toBe(before);
    // The typed address survived the confirmation: Save asks again, and the password does it.
    await saveBusiness(page);
    await question(page).getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, change it" }).click();
    await page.getByText(/^Saved\. New charges pay out to the new wallet/).waitFor();
    expect((await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } })).liveWallet).toBe(wallet);

    // Nobody types another person's password: a colleague is invited by email (asking yours first).
    const colleague = `colleague-${RUN}@shop.example`;
    await page.getByLabel("Email", { exact: true }).fill(colleague);
    await page.getByRole("button", { name: "Invite" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(
      `Invite ${colleague} as admin? They get an email with a link, valid 7 days, to choose their password.`,
    );
    await question(page).getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, invite them" }).click();
    const invited = page.getByRole("listitem").filter({ hasText: colleague });
    await invited.waitFor();
    await invited.getByRole("button", { name: "Revoke" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(`Revoke the invitation of ${colleague}? Its link stops working.`);
    await page.getByRole("button", { name: "Yes, revoke it" }).click();
    await expect.poll(() => invited.count()).toBe(0);
    expect(await app.db.prisma.invitation.count({ where: { email: colleague, revokedAt: { not: null } } })).toBe(1);
    const leaving = await newUser("leaving");
    await page.reload();
    const row = page.getByRole("listitem").filter({ hasText: leaving });
    await row.waitFor();
    await row.getByRole("button", { name: "Remove" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(
      `Remove ${leaving} (owner) from the team? They are signed out at once and can no longer sign in.`,
    );
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: `Yes, remove ${leaving}` }).click();
    await expect.poll(() => row.count()).toBe(0);
    expect(await app.db.prisma.user.count({ where: { email: { in: [colleague, leaving] } } })).toBe(0);
    await page.context().close();
  });

  it("sets up two-factor with a QR code and ten recovery codes; refuses a replayed code; takes a recovery code once; turns off with password and code", async () => {
    const who = await newUser("tfa");
    const page = await newPage();
    await signIn(page, who);
    await signedIn(page);
    await go(page, "Settings");
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    // Turning it on needs the password, as turning it off does.
    await question(page).getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Continue" }).click();
    const qr = page.getByRole("img", { name: /^QR code for your authenticator app/ });
    await qr.waitFor();
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/svg\+xml,%3Csvg/);
    // Drawn under the dashboard's CSP (this page does not bypass it), at its size.
    await expect.poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    const secret = (await page.locator("[data-totp-secret]").textContent())!;
    await page.getByLabel("Code", { exact: true }).fill(totpCode(secret, Date.now()));
    await page.getByRole("button", { name: "Turn on" }).click();
    const codes = page.locator("[data-recovery-codes] li");
    await expect.poll(() => codes.count()).toBe(10);
    const recovery = await codes.allTextContents();
    expect(new Set(recovery).size).toBe(10);
    await expect.poll(() => page.getByText(/^On for .*\. 10 of 10 recovery codes left\.$/).count()).toBe(1);

    // The next step's code signs in once; the same code again is refused.
    const code = totpCode(secret, Date.now() + 30_000);
    const first = await newPage();
    await signIn(first, who, code);
    await signedIn(first);
    const replay = await newPage();
    await signIn(replay, who, code);
    await expect.poll(() => replay.getByRole("alert").textContent()).toBe("Wrong or already used two-factor code.");
    await replay.getByText(/or one of your recovery codes/).waitFor();

    // A recovery code in the same field: once.
    const rescued = await newPage();
    await signIn(rescued, who, recovery[0]);
    await signedIn(rescued);
    const again = await newPage();
    await signIn(again, who, recovery[0]);
    await expect.poll(() => again.getByRole("alert").textContent()).toBe("Wrong or already used two-factor code.");
    for (const p of [first, replay, rescued, again]) await p.context().close();

    await page.reload();
    await expect.poll(() => page.getByText(/9 of 10 recovery codes left/).count()).toBe(1);
    await page.getByRole("button", { name: "Turn off" }).click();
    expect(await question(page).getAttribute("aria-label")).toBe(`Turn off two-factor sign-in for ${who}? Signing in will need only the password.`);
    await question(page).getByLabel("Your password").fill(PASSWORD);
    await question(page).getByLabel("Two-factor code (or a recovery code)").fill(recovery[1]!);
    await page.getByRole("button", { name: "Yes, turn it off" }).click();
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).waitFor();
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { email: who } })).totpSecret).toBeNull();
    await page.context().close();
    expect(cspErrors).toEqual([]);
  });

  it("is accessible (axe: no serious violations) with the confirmations open, at 1280 and 360 px", async () => {
    for (const width of [1280, 360]) {
      const page = await newPage(width, true);
      await signIn(page, owner);
      await signedIn(page);
      await go(page, "Developers");
      const key: Locator = page
        .locator("[data-key]")
        .filter({ has: page.getByRole("button", { name: "Revoke" }) })
        .first();
      await key.getByRole("button", { name: "Roll (old key works 24 h more)" }).click();
      await question(page).getByLabel("Your password").waitFor();
      await audit(page, "roll-key", width);
      await page.getByRole("button", { name: "Keep it" }).click();

      await go(page, "Settings");
      await page.getByLabel("Test settlement wallet").fill(getAddress(hexlify(randomBytes(20))));
      await saveBusiness(page);
      await question(page).getByLabel("Your password").waitFor();
      await audit(page, "wallet-change", width);
      await page.getByRole("button", { name: "Keep it" }).click();

      const who = await newUser("axe");
      const setup = await newPage(width, true);
      await signIn(setup, who);
      await signedIn(setup);
      await go(setup, "Settings");
      await setup.getByRole("button", { name: "Set up two-factor sign-in" }).click();
      await question(setup).getByLabel("Your password").fill(PASSWORD);
      await setup.getByRole("button", { name: "Continue" }).click();
      await setup.getByRole("img", { name: /^QR code/ }).waitFor();
      await audit(setup, "two-factor-setup", width);
      const secret = (await setup.locator("[data-totp-secret]").textContent())!;
      await setup.getByLabel("Code", { exact: true }).fill(totpCode(secret, Date.now()));
      await setup.getByRole("button", { name: "Turn on" }).click();
      await setup.locator("[data-recovery-codes]").waitFor();
      await audit(setup, "recovery-codes", width);

      const code = await newPage(width, true);
      await code.goto(`${app.url}/dashboard`);
      await code.getByLabel("Email").fill(who);
      await code.getByLabel("Password").fill(PASSWORD);
      await code.getByRole("button", { name: "Sign in" }).click();
      await code.getByLabel("Two-factor code").waitFor();
      await audit(code, "sign-in-code", width);
      for (const p of [page, setup, code]) await p.context().close();
    }
  });
});
