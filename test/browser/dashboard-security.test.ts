// The security history in a real browser (Debian's chromium through playwright-core): after a scripted
// session (a failed sign-in, a sign-in, an API key made and revoked, the wallet changed, a sign-out)
// Settings → Security history lists it newest first with who, the address and the browser in words;
// a type filter narrows it and stays in the URL; "Download CSV" downloads the same filtered rows.
// A viewer is refused. Accessibility and screenshots at 1280 and 360 px.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { getAddress } from "ethers";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { auditPage, openPage, PASSWORD, signInAs } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// Emails of this run only: on Redis the sign-in counters outlive a run.
const RUN = randomBytes(4).toString("hex");
const NEW_WALLET = getAddress("0x00000000000000000000000000000000000b0b07");
let app: TestApp;
let browser: Browser;
let owner: string;
let viewer: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  app = await startApp(POLLING);
  const merchantId = app.merchant.merchant.id;
  owner = (await createUser(app.db.prisma, merchantId, { email: `owner-${RUN}@shop.example`, password: PASSWORD }, OPERATOR)).email;
  viewer = (await createUser(app.db.prisma, merchantId, { email: `viewer-${RUN}@shop.example`, password: PASSWORD }, OPERATOR)).email;
  await app.db.prisma.user.update({ where: { email: owner }, data: { role: "owner" } });
  await app.db.prisma.user.update({ where: { email: viewer }, data: { role: "viewer" } });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** The scripted session, through the dashboard's own doors with the browser's cookie. */
async function scriptedSession(page: Page): Promise<void> {
  await page.goto(`${app.url}/dashboard`);
  await page.getByLabel("Email").fill(owner);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").waitFor();
  await signInAs(page, app.url, owner);
  const gql = (query: string, variables: Record<string, unknown> = {}) =>
    page.evaluate(
      async ({ query, variables }) => {
        const session = await (await fetch("/dashboard/session")).json();
        const res = await fetch("/graphql", {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": session.csrfToken },
          body: JSON.stringify({ query, variables }),
        });
        return res.json();
      },
      { query, variables },
    );
  const made = await gql("mutation($p: String) { createApiKey(password: $p) { apiKey { id } } }", { p: PASSWORD });
  expect(made.errors).toBeUndefined();
  expect((await gql("mutation($id: ID!) { revokeApiKey(id: $id) { id } }", { id: made.data.createApiKey.apiKey.id })).errors).toBeUndefined();
  const wallet = await gql("mutation($w: String, $p: String) { updateMerchantSettings(input: { testWallet: $w, password: $p }) { testWallet } }", {
    w: NEW_WALLET,
    p: PASSWORD,
  });
  expect(wallet.errors).toBeUndefined();
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Email").waitFor();
}

/** The rows the table shows: each one's What cell's first line and its Who. */
const rowsOf = (page: Page) =>
  page.locator("tbody tr").evaluateAll((trs) =>
    trs.map((tr) => ({
      type: tr.getAttribute("data-event"),
      who: tr.querySelector("[data-column=who]")?.textContent,
      ip: tr.querySelector("[data-column=ip]")?.textContent,
      browser: tr.querySelector("[data-column=browser]")?.textContent,
    })),
  );

describe("the security history in a browser", () => {
  it("lists a scripted session, narrows it by type in the URL, and downloads the CSV with the same filter", async () => {
    const page = await openPage(browser, { acceptDownloads: true });
    await scriptedSession(page);
    await signInAs(page, app.url, owner);
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("link", { name: "View the security history" }).click();
    await page.getByRole("heading", { name: "Security history" }).waitFor();
    await page.locator("tbody tr").first().waitFor();
    const rows = await rowsOf(page);
    expect(rows.map((r) => r.type)).toEqual([
      "SIGN_IN",
      "SIGN_OUT",
      "WALLET_CHANGED",
      "API_KEY_REVOKED",
      "API_KEY_CREATED",
      "SIGN_IN",
      "SIGN_IN_FAILED",
      // The two users of the test joining (the operator's `users create`), then the merchant's keys.
      "USER_JOINED",
      "USER_JOINED",
      "API_KEY_CREATED",
      "API_KEY_CREATED",
    ]);
    for (const r of rows.slice(0, 7)) {
      expect(r.who).toBe(owner);
      expect(r.ip).toMatch(/127\.0\.0\.1|::1/);
      expect(r.browser).toMatch(/^Chrome on Linux$/);
    }
    // The merchant's first keys were made by the operator's command line.
    expect(rows.at(-1)!.who).toBe("Operator or service");
    await expect(page.locator("tbody tr").nth(6).textContent()).resolves.toContain("wrong password");
    await expect(page.locator("tbody tr").nth(2).textContent()).resolves.toContain("0x0000…0B07");
    await auditPage(page, "dashboard-security", 1280);

    await page.getByLabel("What").selectOption({ label: "Settlement wallet changed" });
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/type=WALLET_CHANGED/);
    await expect.poll(async () => (await rowsOf(page)).map((r) => r.type)).toEqual(["WALLET_CHANGED"]);

    const [file] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    expect(file.suggestedFilename()).toBe("security_events.csv");
    const lines = readFileSync((await file.path())!, "utf8")
      .trimEnd()
      .split("\r\n");
    expect(lines[0]).toBe("id,createdAt,type,userId,email,ip,userAgent,detail");
    expect(lines.slice(1).map((l) => l.split(",")[2])).toEqual(["wallet_changed"]);
    expect(lines[1]).toContain(owner);

    // Back undoes the filter.
    await page.goBack();
    await expect.poll(async () => (await rowsOf(page)).length).toBe(rows.length);
    await auditPage(page, "dashboard-security", 360, { resize: true });
    await page.context().close();
  });

  it("refuses a viewer the history, saying who may read it", async () => {
    const page = await openPage(browser);
    await signInAs(page, app.url, viewer, { path: "/settings/security" });
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/owners and admins/);
    await page.context().close();
  });
});
