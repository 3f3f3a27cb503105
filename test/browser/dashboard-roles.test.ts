// Team roles in a real browser (Debian's chromium through playwright-core), no SMTP (emails are held in
// the outbox, where the links are read): each role signed in sees what it cannot do hidden or disabled
// with a note, and what it tries anyway at /graphql (fetched from the page with the session cookie
// and X-CSRF-Token, as the app does) is refused with permission_denied and changes nothing; an
// invitation with a role, to the invitee's first sign-in; a password changed in Settings ending the
// other session; "Forgot password?" from the sign-in page. Axe on the team page.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import type { Role } from "../../src/domain/permissions.js";
import { createUser } from "../../src/domain/users.js";
import { launchChromium } from "../helpers/browser.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { auditPage, go, openPage, PASSWORD, signedIn, signInAs, submitSignIn } from "./dashboard-helpers.js";

const OUTPUT = new URL("../.output/", import.meta.url);
// Emails of this run only: on Redis the sign-in counters outlive a run.
const RUN = randomBytes(4).toString("hex");
const NEW_PASSWORD = "my fresh long password";
let app: TestApp;
let browser: Browser;
let owner: { id: string; email: string };
let n = 0;

const newUser = (role: Role) =>
  createUser(app.db.prisma, app.merchant.merchant.id, { email: `${role}${++n}-${RUN}@shop.example`, password: PASSWORD, role }, OPERATOR);

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

async function newPage(): Promise<Page> {
  const page = await openPage(browser);
  page.on("pageerror", (e) => console.error("page error:", e));
  return page;
}

/** A GraphQL operation sent from the page as the dashboard sends it: the cookie, and the session's CSRF token. */
async function fromPage(
  page: Page,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] }> {
  return page.evaluate(
    async ({ query, variables }) => {
      const session = await (await fetch("/dashboard/session", { credentials: "same-origin" })).json();
      const res = await fetch("/graphql", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", "x-csrf-token": session.csrfToken },
        body: JSON.stringify({ query, variables }),
      });
      return res.json();
    },
    { query, variables },
  );
}

/** The link's token in the newest email of `type` to `to` (kept, not sent: no SMTP_URL). */
async function heldToken(to: string, type: "invitation" | "password_reset"): Promise<string> {
  const mail = await app.db.prisma.email.findFirstOrThrow({ where: { to, type }, orderBy: { createdAt: "desc" } });
  return /token=([0-9A-Za-z_]+)/.exec(mail.text)![1]!;
}

/** What a refused attempt must leave as it was. */
const state = async () => ({
  users: await app.db.prisma.user.findMany({ where: { merchantId: app.merchant.merchant.id }, select: { id: true, role: true }, orderBy: { id: "asc" } }),
  keys: await app.db.prisma.apiKey.count({ where: { merchantId: app.merchant.merchant.id } }),
  customers: await app.db.prisma.customer.count({ where: { merchantId: app.merchant.merchant.id } }),
  name: (await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } })).name,
});

/** What each role must not do, tried at /graphql from its page. */
const FORBIDDEN: Record<Exclude<Role, "owner">, { query: string; variables?: () => Record<string, unknown> }[]> = {
  admin: [
    { query: "mutation($id: ID!) { deleteUser(id: $id) }", variables: () => ({ id: owner.id }) },
    { query: "mutation($id: ID!) { setUserRole(id: $id, role: VIEWER) { id } }", variables: () => ({ id: owner.id }) },
  ],
  developer: [
    { query: "mutation($id: ID!) { deleteUser(id: $id) }", variables: () => ({ id: owner.id }) },
    { query: 'mutation { updateMerchantSettings(input: { name: "Hijacked" }) { name } }' },
    { query: 'mutation { markChargeReviewed(id: "chrg_000000000000000000000000") { id } }' },
  ],
  support: [
    { query: "mutation($id: ID!) { setUserRole(id: $id, role: VIEWER) { id } }", variables: () => ({ id: owner.id }) },
    { query: 'mutation { updateMerchantSettings(input: { name: "Hijacked" }) { name } }' },
    { query: `mutation { createApiKey(mode: TEST, password: "${PASSWORD}") { secret } }` },
  ],
  viewer: [
    { query: `mutation { inviteUser(email: "friend-${RUN}@shop.example", role: OWNER, password: "${PASSWORD}") { id } }` },
    { query: 'mutation { updateMerchantSettings(input: { name: "Hijacked" }) { name } }' },
    { query: `mutation { createApiKey(mode: TEST, password: "${PASSWORD}") { secret } }` },
    { query: 'mutation { createCustomer(input: { name: "Buyer", email: "buyer@shop.example" }) { id } }' },
  ],
};

describe("dashboard roles", () => {
  it.each(["admin", "developer", "support", "viewer"] as const)("%s: what it cannot do is hidden or disabled, and refused at /graphql", async (role) => {
    const user = await newUser(role);
    const page = await newPage();
    await signInAs(page, app.url, user.email);
    await go(page, "Settings");
    const team = page.getByRole("region", { name: "Team" });
    const ownerRow = team.locator(`[data-user="${owner.email}"]`);
    await ownerRow.waitFor();
    // Nobody but an owner may touch an owner; nobody may change their own role.
    expect(await ownerRow.getByRole("button", { name: "Remove" }).count()).toBe(0);
    expect(await ownerRow.getByRole("combobox").count()).toBe(0);
    expect(await team.locator(`[data-user="${user.email}"]`).getByRole("combobox").count()).toBe(0);
    if (role === "admin") {
      const viewer = await newUser("viewer");
      await page.reload();
      const select = team.locator(`[data-user="${viewer.email}"]`).getByRole("combobox", { name: `Role of ${viewer.email}` });
      await select.waitFor();
      expect(await select.locator("option").allTextContents()).toEqual(["admin", "developer", "support", "viewer"]);
      await page.getByLabel("Role", { exact: true }).waitFor();
      expect(await page.getByLabel("Role", { exact: true }).locator("option").allTextContents()).not.toContain("owner");
      await select.selectOption("support");
      // A role change asks the password, as inviting does.
      await team.getByLabel("Your password").fill(PASSWORD);
      await team.getByRole("button", { name: "Yes, make them support" }).click();
      await expect.poll(async () => (await app.db.prisma.user.findUniqueOrThrow({ where: { id: viewer.id } })).role).toBe("support");
      await auditPage(page, "dashboard-roles-team-admin", 1280);
    } else {
      await team
        .getByRole("note")
        .filter({ hasText: `Your role (${role}) cannot invite, remove or change the roles of teammates.` })
        .waitFor();
      expect(await team.getByRole("button", { name: "Invite" }).count()).toBe(0);
      expect(await team.getByRole("button", { name: "Remove" }).count()).toBe(0);
      await page
        .getByRole("note")
        .filter({ hasText: `Your role (${role}) cannot change the business` })
        .waitFor();
      expect(await page.getByRole("region", { name: "Business", exact: true }).getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    }

    for (const attempt of FORBIDDEN[role]) {
      const before = await state();
      const res = await fromPage(page, attempt.query, attempt.variables?.());
      expect(res.errors?.[0]?.extensions, attempt.query).toMatchObject({ code: "permission_denied", statusCode: 403 });
      // The table's refusal names the role; the team's rules (owners only by owners) name who may.
      expect(res.errors![0]!.message).toMatch(new RegExp(`^(Your role \\(${role}\\) may not do this: only owners|Only owners may)`));
      expect(await state(), attempt.query).toEqual(before);
    }
    await page.context().close();
  });

  it("a viewer's refused action says why in the page", async () => {
    const viewer = await newUser("viewer");
    const page = await newPage();
    await signInAs(page, app.url, viewer.email);
    await go(page, "Settings");
    // The form is disabled for a viewer: enabled by hand, the server still refuses.
    const business = page.getByRole("region", { name: "Business", exact: true });
    await business.getByLabel("Business name").waitFor();
    await page.evaluate(() => document.querySelectorAll("fieldset").forEach((f) => (f.disabled = false)));
    await business.getByLabel("Business name").fill("Hijacked");
    await business.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => business.getByRole("alert").textContent()).toMatch(/^Your role \(viewer\) may not do this: only owners and admins may/);
    expect((await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } })).name).not.toBe("Hijacked");
    await page.context().close();
  });

  it("an invitation with a role: the invitee's first sign-in has that role", async () => {
    const invitee = `support-invitee-${RUN}@shop.example`;
    const page = await newPage();
    await signInAs(page, app.url, owner.email);
    await go(page, "Settings");
    await page.getByText("What each role may do").click();
    await page.getByRole("row", { name: /^support Helping customers/ }).waitFor();
    await page.getByLabel("Email", { exact: true }).fill(invitee);
    await page.getByLabel("Role", { exact: true }).selectOption("support");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.getByLabel("Your password").fill(PASSWORD);
    await page.getByRole("button", { name: "Yes, invite them" }).click();
    // No SMTP_URL: the page shows the link to pass on, the one the outbox keeps.
    const shown = page.locator("[data-invitation-link]");
    await shown.waitFor();
    const token = new URL((await shown.textContent())!).searchParams.get("token");
    expect(token).toBe(await heldToken(invitee, "invitation"));
    await page.locator(`[data-invitation="${invitee}"]`).filter({ hasText: "invited as support" }).waitFor();

    const theirs = await newPage();
    await theirs.goto(`${app.url}/dashboard/invitation?token=${token}`);
    await theirs.getByLabel("New password (10+ characters)").fill(NEW_PASSWORD);
    await theirs.getByLabel("The same password again").fill(NEW_PASSWORD);
    await theirs.getByRole("button", { name: "Create my account" }).click();
    await signedIn(theirs);
    await go(theirs, "Settings");
    await theirs.getByRole("note").filter({ hasText: "Your role (support) cannot invite" }).waitFor();
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { email: invitee } })).role).toBe("support");

    await page.reload();
    await page.locator(`[data-user="${invitee}"]`).getByRole("combobox").waitFor();
    expect(await page.locator(`[data-user="${invitee}"]`).getByRole("combobox").inputValue()).toBe("SUPPORT");
    await page.context().close();
    await theirs.context().close();
  });

  it("a password changed in Settings ends the other session; Forgot password? sets another", async () => {
    const who = await newUser("developer");
    const here = await newPage();
    const there = await newPage();
    await signInAs(here, app.url, who.email);
    await signInAs(there, app.url, who.email);
    await go(here, "Settings");
    const form = here.getByRole("region", { name: "Password" });
    await form.getByLabel("Current password").fill("not my password");
    await form.getByLabel("New password (10 characters or more)").fill(NEW_PASSWORD);
    await form.getByLabel("New password again").fill(NEW_PASSWORD);
    await form.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/not your password/);
    await form.getByLabel("Current password").fill(PASSWORD);
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByRole("status").filter({ hasText: "Password changed. Your 1 other session(s) were signed out." }).waitFor();

    // The other browser is signed out; this one is not.
    await there.reload();
    await there.getByRole("heading", { name: "Sign in to Stablegate" }).waitFor();
    await here.reload();
    await here.getByRole("button", { name: "Sign out", exact: true }).waitFor();

    // "Forgot password?" from the sign-in page, its link read from the outbox.
    await there.getByRole("button", { name: "Forgot password?" }).click();
    await there.getByLabel("Email").fill(who.email);
    await there.getByRole("button", { name: "Send the link" }).click();
    await there
      .getByRole("status")
      .filter({ hasText: /link to choose a new password is on its way/ })
      .waitFor();
    await there.goto(`${app.url}/dashboard/reset-password?token=${await heldToken(who.email, "password_reset")}`);
    await there.getByLabel("New password (10+ characters)").fill("the reset long password");
    await there.getByLabel("The same password again").fill("the reset long password");
    await there.getByRole("button", { name: "Change password" }).click();
    await there.getByRole("heading", { name: "Password changed" }).waitFor();
    await submitSignIn(there, app.url, who.email, { password: NEW_PASSWORD });
    await expect.poll(() => there.getByRole("alert").textContent()).toMatch(/Wrong email or password/);
    await signInAs(there, app.url, who.email, { password: "the reset long password" });
    await here.context().close();
    await there.context().close();
  });
});
