// The team's emails end to end in a real browser (Debian's chromium through playwright-core): "Forgot
// password?" on the sign-in page, the email sent by the worker's sender through a real SMTP server, its
// link opened, a new password set and signed in with; an invitation sent from Settings, its emailed
// link opened in another browser, a password chosen and the invitee signed in. Screenshots and axe on the two link pages.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { pino } from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { type EmailSender, startEmailSender } from "../../src/jobs/email-sender.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { auditPage, go, openPage, PASSWORD, signedIn, signInAs, submitSignIn } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
const RUN = randomBytes(4).toString("hex");
const NEW_PASSWORD = "my fresh long password";
let app: TestApp;
let browser: Browser;
let smtp: TestSmtp;
let sender: EmailSender;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  smtp = await startSmtp();
  app = await startApp({ ...POLLING, SMTP_URL: smtp.url });
  // The worker's sender, as `npm start` runs it: what it sends is what the reader gets.
  sender = startEmailSender(app.db.prisma, pino({ level: "silent" }), { smtpUrl: smtp.url, from: "team@stablegate.example", intervalMs: 20 });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await sender?.stop();
  await app?.stop();
  await smtp?.stop();
});

async function newPage(): Promise<Page> {
  const page = await openPage(browser);
  page.on("pageerror", (e) => console.error("page error:", e));
  return page;
}

/** The token of the one email to `to` that arrived with a link to `page` (what the reader would click, from the text part). */
async function emailedToken(to: string, path: string): Promise<string> {
  const link = new RegExp(`/dashboard/${path}\\?token=([0-9A-Za-z_]+)`);
  const arrived = () => smtp.messages.filter((m) => m.to.includes(to) && link.test(m.parsed.text ?? ""));
  await expect.poll(() => arrived().length, { timeout: 10_000 }).toBe(1);
  const [message] = arrived();
  expect(message!.parsed.html).toContain(`/dashboard/${path}?token=`);
  return link.exec(message!.parsed.text!)![1]!;
}

describe("dashboard team emails", () => {
  it("Forgot password?: the emailed link sets a new password that signs in", async () => {
    const email = `forgetful-${RUN}@shop.example`;
    await createUser(app.db.prisma, app.merchant.merchant.id, { email, password: PASSWORD }, OPERATOR);
    const page = await newPage();
    await page.goto(`${app.url}/dashboard`);
    await page.getByRole("button", { name: "Forgot password?" }).click();
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Send the link" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /link to choose a new password is on its way/ })
      .waitFor();

    const token = await emailedToken(email, "reset-password");
    await page.goto(`${app.url}/dashboard/reset-password?token=${token}`);
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await auditPage(page, "dashboard-reset-password", 1280);
    await page.getByLabel("New password (10+ characters)").fill(NEW_PASSWORD);
    await page.getByLabel("The same password again").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("heading", { name: "Password changed" }).waitFor();
    await page.getByRole("button", { name: "Sign in" }).click();

    // The old password no longer works; the new one does.
    await submitSignIn(page, app.url, email);
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/Wrong email or password/);
    await signInAs(page, app.url, email, { password: NEW_PASSWORD });
    expect(await page.locator(".session .user").textContent()).toBe(email);

    // The link worked once.
    const again = await newPage();
    await again.goto(`${app.url}/dashboard/reset-password?token=${token}`);
    await again.getByLabel("New password (10+ characters)").fill("yet another long one");
    await again.getByLabel("The same password again").fill("yet another long one");
    await again.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => again.getByRole("alert").textContent()).toMatch(/already used or expired/);
    await page.context().close();
    await again.context().close();
  });

  it("an invitation sent from Settings: its link creates the account and signs the invitee in", async () => {
    const owner = `owner-${RUN}@shop.example`;
    const invitee = `invitee-${RUN}@shop.example`;
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: owner, password: PASSWORD }, OPERATOR);
    const page = await newPage();
    await signInAs(page, app.url, owner);
    await go(page, "Settings");
    await page.getByLabel("Email", { exact: true }).fill(invitee);
    await page.getByLabel("Role", { exact: true }).selectOption("developer");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, invite them" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Invitation sent to ${invitee}.` })
      .waitFor();
    await page.getByRole("listitem").filter({ hasText: invitee }).waitFor();

    const token = await emailedToken(invitee, "invitation");
    const theirs = await newPage();
    await theirs.goto(`${app.url}/dashboard/invitation?token=${token}`);
    await theirs.getByRole("heading", { name: "Join the team" }).waitFor();
    await auditPage(theirs, "dashboard-invitation", 1280);
    await theirs.getByLabel("New password (10+ characters)").fill(NEW_PASSWORD);
    await theirs.getByLabel("The same password again").fill(NEW_PASSWORD);
    await theirs.getByRole("button", { name: "Create my account" }).click();
    await signedIn(theirs);
    expect(await theirs.locator(".session .user").textContent()).toBe(invitee);
    expect(new URL(theirs.url()).pathname).toBe("/dashboard/");

    // The owner's list shows the new user instead of the invitation.
    await page.reload();
    await page.getByRole("listitem").filter({ hasText: invitee }).getByRole("button", { name: "Remove" }).waitFor();
    await page.context().close();
    await theirs.context().close();
  });
});
