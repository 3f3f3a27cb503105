// Emails to a merchant's team (.docs/email.md "To the merchant's team"), through the real dashboard
// routes and GraphQL, read from the outbox (prisma.email): "Forgot password?" and its link, invitations
// and their acceptance, security notices written with the change (and nothing for a refused one), the
// new-browser notice, and alerts once per charge and reason.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { blockPayouts, summarizeBlocks } from "../../src/domain/payouts.js";
import { flagChargesForReview } from "../../src/domain/review.js";
import { openSession } from "../../src/domain/sessions.js";
import { newTotpSecret, totpCode } from "../../src/domain/totp.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";
import { removeUser } from "../../src/domain/team.js";
import { createUser } from "../../src/domain/users.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";

const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a brand new long password";

describe("team emails", () => {
  let app: TestApp;
  let n = 0;
  const run = randomBytes(4).toString("hex");
  beforeAll(async () => {
    app = await startApp();
  }, 60_000);
  afterAll(() => app?.stop());

  const prisma = () => app.db.prisma;
  const email = (tag: string) => `${tag}${++n}-${run}@example.com`;
  /** A merchant of its own with one user, so that "every user" is known. */
  const team = async () => {
    const shop = await app.newMerchant();
    const user = await createUser(prisma(), shop.merchant.id, { email: email("owner"), password: PASSWORD }, OPERATOR);
    return { shop, merchantId: shop.merchant.id, user };
  };
  const outbox = (where: { to?: string; type?: string; merchantId?: string }) =>
    prisma().email.findMany({ where: { ...where, ...(where.to && { to: where.to.toLowerCase() }) }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const signIn = (body: Record<string, unknown>, headers: Record<string, string> = {}) => app.call("POST", "/dashboard/session", { key: null, body, headers });
  const browser = async (address: string, password = PASSWORD, headers: Record<string, string> = {}) => {
    const res = await signIn({ email: address, password }, headers);
    expect(res.status, res.text).toBe(201);
    const [session, device] = res.headers.getSetCookie();
    return { cookie: session!.split(";")[0]!, device: device!.split(";")[0]!, csrf: res.body.csrfToken as string };
  };
  const gql = async (b: { cookie: string; csrf: string }, query: string, variables?: Record<string, unknown>) =>
    (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } })).body;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => app.call("POST", path, { key: null, body, headers });
  /** The token in an email's link to `page`. */
  const linkToken = (text: string, page: string) => {
    const match = new RegExp(`${app.settings.publicUrl!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/dashboard/${page}\\?token=([0-9A-Za-z_]+)`).exec(text);
    expect(match, text).not.toBeNull();
    return match![1]!;
  };

  describe("password reset", () => {
    it("emails a single-use link that sets the password, ends every session and tells the user", async () => {
      const { user } = await team();
      const old = await browser(user.email);
      const asked = await post("/dashboard/password/forgot", { email: user.email.toUpperCase() });
      expect(asked.status, asked.text).toBe(202);
      expect(asked.headers.get("cache-control")).toBe("no-store");
      const [sent, ...more] = await outbox({ to: user.email, type: "password_reset" });
      expect(more).toEqual([]);
      expect(sent).toMatchObject({ status: "QUEUED", subject: expect.stringContaining("Reset your dashboard password") });
      const token = linkToken(sent!.text, "reset-password");
      expect(sent!.html).toContain(`/dashboard/reset-password?token=${token}`);
      // Only the token's hash is kept.
      expect(JSON.stringify(await prisma().passwordReset.findMany({ where: { userId: user.id } }))).not.toContain(token);

      expectError(await post("/dashboard/password/reset", { token, password: "short" }), 400, "parameter_invalid", "password");
      const reset = await post("/dashboard/password/reset", { token, password: NEW_PASSWORD });
      expect(reset.status, reset.text).toBe(200);
      expect((await gql(old, "{ viewer { user { id } } }")).errors[0].extensions.code).toBe("session_invalid");
      expectError(await signIn({ email: user.email, password: PASSWORD }), 401, "sign_in_failed");
      await browser(user.email, NEW_PASSWORD);
      expectError(await post("/dashboard/password/reset", { token, password: "yet another password" }), 400, "password_reset_invalid", "token");
      const notices = await outbox({ to: user.email, type: "security_notice" });
      expect(notices.map((e) => e.subject)).toContainEqual(expect.stringContaining("Your dashboard password was reset"));
    });

    it("a sign-in whose password was checked just before a reset opens no session", async () => {
      const { user } = await team();
      const checked = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
      await prisma().user.update({ where: { id: user.id }, data: { passwordHash: `${checked.passwordHash}x` } });
      await expect(openSession(prisma(), checked, false, { token: null, userAgent: null, ip: "127.0.0.1" })).rejects.toMatchObject({ code: "sign_in_failed" });
      expect(await prisma().dashboardSession.count({ where: { userId: user.id } })).toBe(0);
    });

    it("answers 202 alike for an unknown email and sends nothing", async () => {
      const nobody = email("nobody");
      const res = await post("/dashboard/password/forgot", { email: nobody });
      const { user } = await team();
      const known = await post("/dashboard/password/forgot", { email: user.email });
      expect([res.status, known.status]).toEqual([202, 202]);
      expect(res.body).toEqual(known.body);
      expect(await outbox({ to: nobody })).toEqual([]);
      expect(await outbox({ to: user.email, type: "password_reset" })).toHaveLength(1);
      expectError(await post("/dashboard/password/forgot", {}), 400, "parameter_missing", "email");
      // Another site's page cannot ask on a visitor's behalf.
      expectError(await post("/dashboard/password/forgot", { email: user.email }, { origin: "https://evil.example" }), 403, "csrf_token_invalid");
    });

    it("sends at most 3 links an hour to an address, still answering 202", async () => {
      const { user } = await team();
      for (let i = 0; i < 4; i++) expect((await post("/dashboard/password/forgot", { email: user.email })).status).toBe(202);
      expect(await outbox({ to: user.email, type: "password_reset" })).toHaveLength(3);
      // An hour later it may ask again.
      await prisma().passwordReset.updateMany({ where: { userId: user.id }, data: { createdAt: new Date(Date.now() - 61 * 60 * 1000) } });
      await post("/dashboard/password/forgot", { email: user.email });
      expect(await outbox({ to: user.email, type: "password_reset" })).toHaveLength(4);
    });

    it("refuses an expired or unknown link", async () => {
      const { user } = await team();
      await post("/dashboard/password/forgot", { email: user.email });
      const token = linkToken((await outbox({ to: user.email, type: "password_reset" }))[0]!.text, "reset-password");
      await prisma().passwordReset.updateMany({ where: { userId: user.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
      expectError(await post("/dashboard/password/reset", { token, password: NEW_PASSWORD }), 400, "password_reset_invalid", "token");
      expectError(await post("/dashboard/password/reset", { token: "pwr_nope", password: NEW_PASSWORD }), 400, "password_reset_invalid", "token");
    });
  });

  describe("invitations", () => {
    const invite = (b: { cookie: string; csrf: string }, address: string, role?: string) =>
      gql(b, "mutation($e: String!, $r: UserRole, $p: String) { inviteUser(email: $e, role: $r, password: $p) { id email role expiresAt } }", {
        e: address,
        r: role,
        p: PASSWORD,
      });

    it("emails a link; accepting it creates the user with their password, signs them in and tells the team", async () => {
      const { user, merchantId } = await team();
      const b = await browser(user.email);
      const invitee = email("invitee");
      const res = await invite(b, invitee, "DEVELOPER");
      expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
      expect(res.data.inviteUser).toMatchObject({ id: expect.stringMatching(/^invt_/), email: invitee, role: "DEVELOPER" });
      expect(Date.parse(res.data.inviteUser.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 24 * 3600 * 1000);
      const listed = await gql(b, "{ invitations { id email } }");
      expect(listed.data.invitations).toEqual([{ id: res.data.inviteUser.id, email: invitee }]);
      const [sent] = await outbox({ to: invitee, type: "invitation" });
      expect(sent).toMatchObject({ merchantId, relatedId: res.data.inviteUser.id });
      const token = linkToken(sent!.text, "invitation");

      // A refused password spends nothing, and another site's page cannot accept.
      expectError(await post("/dashboard/invitations/accept", { token, password: "short" }), 400, "parameter_invalid", "password");
      expectError(
        await post("/dashboard/invitations/accept", { token, password: NEW_PASSWORD }, { origin: "https://evil.example" }),
        403,
        "csrf_token_invalid",
      );
      expect(await prisma().user.count({ where: { email: invitee } })).toBe(0);
      const accepted = await post("/dashboard/invitations/accept", { token, password: NEW_PASSWORD });
      expect(accepted.status, accepted.text).toBe(200);
      expect(accepted.body).toMatchObject({ mode: "test", user: { email: invitee } });
      const session = { cookie: accepted.headers.getSetCookie()[0]!.split(";")[0]!, csrf: accepted.body.csrfToken };
      expect((await gql(session, "{ viewer { user { email } merchant { id } } }")).data.viewer).toEqual({
        user: { email: invitee },
        merchant: { id: merchantId },
      });
      await browser(invitee, NEW_PASSWORD);
      expect((await gql(b, "{ invitations { id } }")).data.invitations).toEqual([]);
      const added = await outbox({ merchantId, type: "security_notice" });
      const aboutInvitee = added.filter((e) => e.subject.startsWith("A user was added") && e.relatedId === accepted.body.user.id);
      expect(aboutInvitee.map((e) => e.to).sort()).toEqual([user.email, invitee].sort());
      // Used once.
      expectError(await post("/dashboard/invitations/accept", { token, password: NEW_PASSWORD }), 400, "invitation_invalid", "token");
    });

    it("refuses a revoked or expired link, and an email that has an account (409)", async () => {
      const { user, merchantId } = await team();
      const b = await browser(user.email);
      expect((await invite(b, user.email)).errors[0].extensions).toMatchObject({ code: "user_exists", statusCode: 409, param: "email" });
      expect((await invite(b, email("x"), "SUPERUSER")).errors[0].message).toMatch(/"SUPERUSER" does not exist in "UserRole" enum/);
      const revokedEmail = email("revoked");
      const revoked = (await invite(b, revokedEmail)).data.inviteUser;
      expect(revoked.role).toBe("ADMIN");
      expect((await gql(b, "mutation($id: ID!) { revokeInvitation(id: $id) { id } }", { id: revoked.id })).data.revokeInvitation.id).toBe(revoked.id);
      const revokedToken = linkToken((await outbox({ to: revokedEmail, type: "invitation" }))[0]!.text, "invitation");
      expectError(await post("/dashboard/invitations/accept", { token: revokedToken, password: NEW_PASSWORD }), 400, "invitation_invalid", "token");
      const lateEmail = email("late");
      await invite(b, lateEmail);
      await prisma().invitation.updateMany({ where: { merchantId, email: lateEmail }, data: { expiresAt: new Date(Date.now() - 1000) } });
      const lateToken = linkToken((await outbox({ to: lateEmail, type: "invitation" }))[0]!.text, "invitation");
      expectError(await post("/dashboard/invitations/accept", { token: lateToken, password: NEW_PASSWORD }), 400, "invitation_invalid", "token");
      expect(await prisma().user.count({ where: { email: { in: [revokedEmail, lateEmail] } } })).toBe(0);
    });

    it("does not tell an inviter whether another merchant has the address; accepting then says so to the invitee", async () => {
      const elsewhere = await team();
      const { user } = await team();
      const b = await browser(user.email);
      const res = await invite(b, elsewhere.user.email);
      expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
      const token = linkToken((await outbox({ to: elsewhere.user.email, type: "invitation" }))[0]!.text, "invitation");
      expectError(await post("/dashboard/invitations/accept", { token, password: NEW_PASSWORD }), 409, "user_exists", "email");
      expect(await prisma().user.count({ where: { email: elsewhere.user.email } })).toBe(1);
    });

    it("ends the pending invitations of a user who is removed", async () => {
      const { user, merchantId } = await team();
      const inviter = await createUser(prisma(), merchantId, { email: email("inviter"), password: PASSWORD }, OPERATOR);
      const alt = email("alt");
      expect((await invite(await browser(inviter.email), alt)).errors).toBeUndefined();
      const token = linkToken((await outbox({ to: alt, type: "invitation" }))[0]!.text, "invitation");
      await removeUser(prisma(), "operator", inviter, OPERATOR, OPERATOR_ACTOR);
      expectError(await post("/dashboard/invitations/accept", { token, password: NEW_PASSWORD }), 400, "invitation_invalid", "token");
      expect(await prisma().invitation.count({ where: { invitedBy: inviter.id } })).toBe(0);
      expect(user.merchantId).toBe(merchantId);
    });
  });

  describe("security notices", () => {
    it("tells every user of an API key created, rolled and revoked, and nothing of a refused one", async () => {
      const { user, merchantId } = await team();
      const other = await createUser(prisma(), merchantId, { email: email("teammate"), password: PASSWORD }, OPERATOR);
      const b = await browser(user.email);
      const before = (await outbox({ merchantId, type: "security_notice" })).length;
      const refused = await gql(b, "mutation { createApiKey(mode: TEST) { secret } }");
      expect(refused.errors[0].extensions.code).toBe("reauthentication_required");
      expect(await outbox({ merchantId, type: "security_notice" })).toHaveLength(before);

      const made = await gql(b, "mutation($p: String) { createApiKey(mode: LIVE, password: $p) { apiKey { id } } }", { p: PASSWORD });
      const id = made.data.createApiKey.apiKey.id;
      const rolled = await gql(b, "mutation($id: ID!, $p: String) { rollApiKey(id: $id, password: $p) { apiKey { id } } }", { id, p: PASSWORD });
      expect(rolled.errors).toBeUndefined();
      // Rolling it again is refused inside the transaction: its notice is rolled back with it.
      const again = await gql(b, "mutation($id: ID!, $p: String) { rollApiKey(id: $id, password: $p) { apiKey { id } } }", { id, p: PASSWORD });
      expect(again.errors[0].extensions.code).toBe("parameter_invalid");
      expect((await gql(b, "mutation($id: ID!) { revokeApiKey(id: $id) { id } }", { id })).errors).toBeUndefined();
      const notices = (await outbox({ merchantId, type: "security_notice" })).slice(before);
      const about = (subject: string) => notices.filter((e) => e.subject.startsWith(subject));
      for (const subject of ["An API key was created", "An API key was rolled", "An API key was revoked"]) {
        expect(
          about(subject)
            .map((e) => e.to)
            .sort(),
          subject,
        ).toEqual([user.email, other.email].sort());
        expect(about(subject)[0]).toMatchObject({ livemode: true, relatedId: id });
      }
      expect(about("An API key was created")[0]!.text).toContain(id);
    });

    it("tells of a settlement wallet change with the old and new address", async () => {
      const { user, merchantId, shop } = await team();
      const b = await browser(user.email);
      const wallet = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
      const refused = await gql(b, "mutation($w: String) { updateMerchantSettings(input: { liveWallet: $w }) { liveWallet } }", { w: wallet });
      expect(refused.errors[0].extensions.code).toBe("reauthentication_required");
      const walletNotices = () => outbox({ merchantId, type: "security_notice" }).then((rows) => rows.filter((e) => e.subject.includes("settlement wallet")));
      expect(await walletNotices()).toEqual([]);
      await app.call("POST", "/dashboard/session/reauthenticate", {
        key: null,
        body: { password: PASSWORD },
        headers: { cookie: b.cookie, "x-csrf-token": b.csrf },
      });
      expect((await gql(b, "mutation($w: String) { updateMerchantSettings(input: { liveWallet: $w }) { liveWallet } }", { w: wallet })).errors).toBeUndefined();
      const [notice, ...more] = await walletNotices();
      expect(more).toEqual([]);
      expect(notice).toMatchObject({ to: user.email, livemode: true, subject: expect.stringContaining("live-mode settlement wallet was changed") });
      expect(notice!.text).toContain(shop.merchant.liveWallet!);
      expect(notice!.text).toContain(wallet);
    });

    it("tells of a user removed (the team and that user) and of two-factor turned off (that user)", async () => {
      const { user, merchantId } = await team();
      const other = await createUser(prisma(), merchantId, { email: email("leaving"), password: PASSWORD }, OPERATOR);
      const b = await browser(user.email);
      expect((await gql(b, 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', { id: other.id })).errors).toBeUndefined();
      const removed = (await outbox({ merchantId, type: "security_notice" })).filter((e) => e.subject.startsWith("A user was removed"));
      expect(removed.map((e) => e.to).sort()).toEqual([user.email, other.email].sort());

      const secret = newTotpSecret();
      await prisma().user.update({ where: { id: user.id }, data: { totpSecret: secret } });
      const wrong = await gql(b, "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled } }", { p: PASSWORD, c: "000000" });
      expect(wrong.errors[0].extensions.code).toBe("reauthentication_required");
      const count = () => outbox({ merchantId, type: "security_notice" }).then((rows) => rows.filter((e) => e.subject.startsWith("Two-factor")).length);
      expect(await count()).toBe(0);
      const off = await gql(b, "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled } }", {
        p: PASSWORD,
        c: totpCode(secret, Date.now()),
      });
      expect(off.errors, JSON.stringify(off.errors)).toBeUndefined();
      const [notice] = (await outbox({ merchantId, type: "security_notice" })).filter((e) => e.subject.startsWith("Two-factor"));
      expect(notice).toMatchObject({ to: user.email, relatedId: user.id });
    });

    it("tells a user of a sign-in from a browser not seen before, not of their first or of a known one", async () => {
      const { user } = await team();
      const newBrowser = () => outbox({ to: user.email, type: "security_notice" }).then((rows) => rows.filter((e) => e.subject.startsWith("New sign-in")));
      const first = await browser(user.email, PASSWORD, { "user-agent": "FirstBrowser/1.0" });
      expect(first.device).toMatch(/^sg_device=sgd_/);
      expect(await newBrowser()).toEqual([]);
      const again = await browser(user.email, PASSWORD, { cookie: first.device, "user-agent": "FirstBrowser/1.0" });
      expect(again.device).toBe(first.device);
      expect(await newBrowser()).toEqual([]);
      // Only the cookie's hash is stored.
      expect(JSON.stringify(await prisma().userDevice.findMany({ where: { userId: user.id } }))).not.toContain(first.device.slice("sg_device=".length));
      await browser(user.email, PASSWORD, { "user-agent": "Other<Browser>/2.0 <script>alert(1)</script>" });
      const [notice, ...more] = await newBrowser();
      expect(more).toEqual([]);
      expect(notice!.text).toContain("Other<Browser>/2.0");
      expect(notice!.text).toContain("127.0.0.1");
      expect(notice!.html).toContain("Other&#60;Browser&#62;/2.0");
      expect(notice!.html).not.toContain("<script>");
      // A failed sign-in from a new browser tells nothing.
      expectError(await signIn({ email: user.email, password: "wrong password!" }), 401, "sign_in_failed");
      expect(await newBrowser()).toHaveLength(1);
    });
  });

  describe("alerts", () => {
    const charge = async (key: string) => {
      const res = await app.call("POST", "/v1/charges", { key, body: { orderId: `alert-${++n}-${run}`, amount: "5" } });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };

    it("emails the team once per charge and review reason", async () => {
      const { shop, user, merchantId } = await team();
      const id = await charge(shop.apiKeys.test.secret);
      await flagChargesForReview(prisma(), new Map([[id, "the clone holds 1 USDC more than the ledger"]]), app.settings);
      await flagChargesForReview(prisma(), new Map([[id, "the clone holds 1 USDC more than the ledger"]]), app.settings);
      await flagChargesForReview(prisma(), new Map([[id, "a confirmed transfer is gone"]]), app.settings);
      await flagChargesForReview(prisma(), new Map([[id, "the clone holds 1 USDC more than the ledger"]]), app.settings);
      const alerts = await outbox({ merchantId, type: "alert" });
      expect(alerts.map((e) => [e.to, e.relatedId])).toEqual([
        [user.email, id],
        [user.email, id],
      ]);
      expect(alerts[0]!.subject).toContain(`Charge ${id} needs review`);
      expect(alerts[0]!.text).toContain(`${app.settings.publicUrl}/dashboard/charges/${id}`);
    });

    it("emails the team once per charge and payout block reason", async () => {
      const { shop, merchantId } = await team();
      const id = await charge(shop.apiKeys.test.secret);
      const row = await prisma().charge.findUniqueOrThrow({ where: { id } });
      await prisma().clone.create({ data: { chargeId: id, chainId: 31337, address: `0x${randomBytes(20).toString("hex")}`, version: 2 } });
      const block = () => blockPayouts(prisma(), app.settings, 31337, [id], "wallet_blacklisted", new Date(Date.now() + 60_000));
      expect(await block()).toHaveLength(1);
      await block();
      // Unblocked, then blocked again for the same reason: still one email.
      await prisma().clone.updateMany({ where: { chargeId: id }, data: { payoutBlockedReason: null, payoutBlockedAt: null } });
      await prisma().$transaction((tx) => summarizeBlocks(tx, [id], app.settings));
      await block();
      const alerts = await outbox({ merchantId, type: "alert" });
      expect(alerts).toHaveLength(1);
      expect(alerts[0]).toMatchObject({ relatedId: id, livemode: row.livemode, subject: expect.stringContaining("Payout blocked") });
      expect(alerts[0]!.text).toContain("wallet_blacklisted");
    });

    it("tells of many charges blocked together in one email, and of the next batch that day not again", async () => {
      const { shop, user, merchantId } = await team();
      const ids: string[] = [];
      for (let i = 0; i < 25; i++) ids.push(await charge(shop.apiKeys.test.secret));
      for (const id of ids)
        await prisma().clone.create({ data: { chargeId: id, chainId: 31337, address: `0x${randomBytes(20).toString("hex")}`, version: 2 } });
      const until = new Date(Date.now() + 60_000);
      await blockPayouts(prisma(), app.settings, 31337, ids.slice(0, 22), "token_paused", until);
      await blockPayouts(prisma(), app.settings, 31337, ids.slice(22), "token_paused", until);
      const alerts = await outbox({ merchantId, type: "alert" });
      expect(alerts.map((e) => [e.to, e.subject.startsWith("Payouts blocked for 22 charges")])).toEqual([[user.email, true]]);
      expect(alerts[0]!.text).toContain("And 2 more");
      expect(alerts[0]!.text).toContain(`${app.settings.publicUrl}/dashboard/charges`);
    });
  });
});
